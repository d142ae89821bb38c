"""CamVid, Cityscapes, ADE20K and folder datasets on tiny layouts; the real CamVid test split."""

import numpy
import pytest
from PIL import Image

from cvzoo.datasets import (ADE20KSemanticSegmentationDataset, CamVidDataset,
                            CityscapesSemanticSegmentationDataset, DirectoryParsingLabelDataset,
                            ImageLabelDirectoryDataset, LabeledImageDataset,
                            imagenet_label_names)


def _png(path, array):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)


def test_camvid_layout(tmp_path):
    label = numpy.array([[0, 11], [10, 3]], numpy.uint8)
    _png(tmp_path / 'val' / 'x.png', numpy.zeros((2, 2, 3), numpy.uint8))
    _png(tmp_path / 'valannot' / 'x.png', label)
    (tmp_path / 'val.txt').write_text('/SegNet/CamVid/val/x.png /SegNet/CamVid/valannot/x.png\n')
    img, out = CamVidDataset(tmp_path, split='val')[0]
    assert img.shape == (3, 2, 2)
    numpy.testing.assert_array_equal(out, [[0, -1], [10, 3]])
    with pytest.raises(FileNotFoundError, match='test.txt'):
        CamVidDataset(tmp_path, split='test')


def test_camvid_real_test_split(shared_data):
    dataset = CamVidDataset(shared_data / 'camvid', split='test')
    assert len(dataset) == 233
    img, label = dataset[0]
    assert img.shape == (3, 360, 480) and label.shape == (360, 480)
    assert label.dtype == numpy.int32
    assert set(numpy.unique(label).tolist()) <= set(range(-1, 11))


def test_cityscapes_train_ids(tmp_path):
    label_id = numpy.array([[7, 26], [0, 33]], numpy.uint8)
    _png(tmp_path / 'leftImg8bit' / 'val' / 'bonn' / 'bonn_01_leftImg8bit.png',
         numpy.zeros((2, 2, 3), numpy.uint8))
    _png(tmp_path / 'gtFine' / 'val' / 'bonn' / 'bonn_01_gtFine_labelIds.png', label_id)
    img, label = CityscapesSemanticSegmentationDataset(tmp_path, split='val')[0]
    numpy.testing.assert_array_equal(label, [[0, 13], [-1, 18]])
    with pytest.raises(FileNotFoundError, match='leftImg8bit'):
        CityscapesSemanticSegmentationDataset(tmp_path, split='train')


def test_ade20k_shift(tmp_path):
    root = tmp_path / 'ADEChallengeData2016'
    _png(root / 'images' / 'validation' / 'ADE_val_1.jpg', numpy.zeros((2, 2, 3), numpy.uint8))
    _png(root / 'annotations' / 'validation' / 'ADE_val_1.png',
         numpy.array([[0, 1], [150, 2]], numpy.uint8))
    _, label = ADE20KSemanticSegmentationDataset(root, split='val')[0]
    numpy.testing.assert_array_equal(label, [[-1, 0], [149, 1]])


def test_folder_per_class_and_file_list(tmp_path):
    for name, value in (('cat', 10), ('dog', 20)):
        _png(tmp_path / 'train' / name / f'{name}1.png', numpy.full((3, 4, 3), value,
                                                                    numpy.uint8))
    dataset = DirectoryParsingLabelDataset(tmp_path / 'train')
    assert dataset.label_names == ('cat', 'dog') and len(dataset) == 2
    img, label = dataset[1]
    assert label == 1 and img[0, 0, 0] == 20
    (tmp_path / 'list.txt').write_text('cat/cat1.png 4\ndog/dog1.png 7\n')
    listed = LabeledImageDataset(tmp_path / 'list.txt', root=tmp_path / 'train')
    assert listed[1][1] == 7 and listed[0][0].shape == (3, 3, 4)
    (tmp_path / 'bad.txt').write_text('cat/cat1.png\n')
    with pytest.raises(OSError, match='bad.txt'):
        LabeledImageDataset(tmp_path / 'bad.txt')


def test_image_label_directory(tmp_path):
    _png(tmp_path / 'img' / 'a.jpg', numpy.zeros((2, 3, 3), numpy.uint8))
    _png(tmp_path / 'lbl' / 'a.png', numpy.array([[0, 1, 255], [2, 2, 2]], numpy.uint8))
    img, label = ImageLabelDirectoryDataset(tmp_path / 'img', tmp_path / 'lbl',
                                            ignore_label=255)[0]
    numpy.testing.assert_array_equal(label, [[0, 1, -1], [2, 2, 2]])
    _png(tmp_path / 'img' / 'b.jpg', numpy.zeros((2, 3, 3), numpy.uint8))
    with pytest.raises(FileNotFoundError, match='b.png'):
        ImageLabelDirectoryDataset(tmp_path / 'img', tmp_path / 'lbl')


def test_imagenet_names():
    assert len(imagenet_label_names) == 1000
    assert imagenet_label_names[0] == 'tench'


def test_image_label_directory_checks_values_against_label_names(tmp_path):
    from cvzoo import errors

    _png(tmp_path / 'img' / 'a.png', numpy.zeros((2, 3, 3), numpy.uint8))
    _png(tmp_path / 'lbl' / 'a.png', numpy.array([[0, 1, 255], [2, 2, 3]], numpy.uint8))
    dataset = ImageLabelDirectoryDataset(tmp_path / 'img', tmp_path / 'lbl', 255,
                                         label_names=('a', 'b', 'c', 'd'))
    assert dataset.label_names == ('a', 'b', 'c', 'd')
    numpy.testing.assert_array_equal(dataset[0][1], [[0, 1, -1], [2, 2, 3]])
    dataset = ImageLabelDirectoryDataset(tmp_path / 'img', tmp_path / 'lbl', 255,
                                         label_names=('a', 'b', 'c'))
    with pytest.raises(errors.AnnotationError, match='a.png: label value 3 is not a class id'):
        dataset[0]
    dataset = ImageLabelDirectoryDataset(tmp_path / 'img', tmp_path / 'lbl',
                                         label_names=('a', 'b', 'c', 'd'))
    with pytest.raises(errors.AnnotationError, match='label value 255'):
        dataset[0]
