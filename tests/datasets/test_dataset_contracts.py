"""Every dataset class, on a tiny layout built in tmp_path, through cvzoo.testing's checks.

The layouts hold the awkward cases real data has: an image with no object, a grey JPEG,
boxes past the border, difficult and crowd objects, palette label PNGs, ignore pixels.
"""

import json

import numpy
import pytest
from PIL import Image

from cvzoo import datasets
from cvzoo.testing import (assert_is_bbox_dataset, assert_is_instance_segmentation_dataset,
                           assert_is_label_dataset, assert_is_semantic_segmentation_dataset)
from cvzoo.transforms import flip, flip_bbox

H, W = 10, 14
XML = ('<annotation><size><width>{W}</width><height>{H}</height></size>{objects}'
       '</annotation>')
OBJECT = ('<object><name>{}</name><difficult>{}</difficult><bndbox><xmin>{}</xmin>'
          '<ymin>{}</ymin><xmax>{}</xmax><ymax>{}</ymax></bndbox></object>')


def _rgb(path, value=90, size=(H, W), mode='RGB'):
    path.parent.mkdir(parents=True, exist_ok=True)
    array = numpy.full(size + (3,), value, numpy.uint8)
    Image.fromarray(array).convert(mode).save(path)


def _label_png(path, array, palette=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    pil_img = Image.fromarray(array.astype(numpy.uint8), mode='L')
    (pil_img.convert('P') if palette else pil_img).save(path)


def _blocks(value_a, value_b, border=None):
    """An (H, W) map with two rectangles, and an optional border value on row 0."""
    array = numpy.zeros((H, W), numpy.uint8)
    array[2:5, 1:4], array[5:9, 6:12] = value_a, value_b
    if border is not None:
        array[0] = border
    return array


def _write_voc(root):
    """Three images: two objects (one difficult, one past the border), none, grey JPEG."""
    objects = {'a': [('dog', 0, 2, 3, 9, 8), ('person', 1, 5, 1, W + 6, H)],
               'b': [],
               'c': [('car', 0, 1, 1, W, H)]}
    for name, objs in objects.items():
        _rgb(root / 'JPEGImages' / f'{name}.jpg', mode='L' if name == 'c' else 'RGB')
        text = ''.join(OBJECT.format(*obj) for obj in objs)
        (root / 'Annotations').mkdir(exist_ok=True)
        (root / 'Annotations' / f'{name}.xml').write_text(XML.format(W=W, H=H, objects=text))
    for listing, split in (('Main', 'trainval'), ('Segmentation', 'train')):
        (root / 'ImageSets' / listing).mkdir(parents=True, exist_ok=True)
        (root / 'ImageSets' / listing / f'{split}.txt').write_text('a\nb\nc\n')
    for name, (cls, obj) in {'a': ((12, 15), (1, 2)), 'b': ((0, 0), (0, 0)),
                             'c': ((7, 7), (1, 2))}.items():
        _label_png(root / 'SegmentationClass' / f'{name}.png', _blocks(*cls, 255), True)
        _label_png(root / 'SegmentationObject' / f'{name}.png', _blocks(*obj, 255), True)
    return root


def _write_coco(root):
    """Images without annotations, without width/height, a crowd RLE and a box overflow."""
    for name in ('a.jpg', 'b.png', 'c.jpg'):
        _rgb(root / 'images' / name, mode='L' if name == 'c.jpg' else 'RGB')
    crowd = numpy.zeros((H, W), numpy.uint8)
    crowd[1:4, 8:12] = 1
    flat = numpy.r_[crowd.T.ravel(), 2]
    counts = numpy.diff(numpy.r_[0, numpy.flatnonzero(numpy.diff(numpy.r_[0, flat]))])
    annotations = [
        {'id': 1, 'image_id': 1, 'category_id': 3, 'bbox': [1, 1, 5, 4], 'area': 20,
         'iscrowd': 0, 'segmentation': [[1, 1, 6, 1, 6, 5, 1, 5]]},
        {'id': 2, 'image_id': 1, 'category_id': 9, 'bbox': [8, 1, 4, 3], 'area': 12,
         'iscrowd': 1, 'segmentation': {'size': [H, W], 'counts': counts.tolist()}},
        {'id': 3, 'image_id': 3, 'category_id': 9, 'bbox': [10, 6, 20, 20], 'area': 16,
         'iscrowd': 0, 'segmentation': [[10, 6, 14, 6, 14, 10, 10, 10]]},
    ]
    data = {'images': [{'id': 1, 'file_name': 'a.jpg', 'width': W, 'height': H},
                       {'id': 2, 'file_name': 'b.png', 'width': W, 'height': H},
                       {'id': 3, 'file_name': 'c.jpg'}],
            'categories': [{'id': 3, 'name': 'gear'}, {'id': 9, 'name': 'widget'}],
            'annotations': annotations}
    (root / 'instances.json').write_text(json.dumps(data))
    return root / 'instances.json', root / 'images'


def _write_segmentation_layouts(root):
    """CamVid, Cityscapes, ADE20K and an image + label PNG folder side by side."""
    camvid = root / 'camvid'
    _rgb(camvid / 'val' / 'x.png')
    _label_png(camvid / 'valannot' / 'x.png', _blocks(10, 11))
    (camvid / 'val.txt').write_text('/SegNet/CamVid/val/x.png /SegNet/CamVid/valannot/x.png\n')
    city = root / 'cityscapes'
    _rgb(city / 'leftImg8bit' / 'val' / 'bonn' / 'bonn_1_leftImg8bit.png')
    _label_png(city / 'gtFine' / 'val' / 'bonn' / 'bonn_1_gtFine_labelIds.png',
               _blocks(26, 33, border=255))
    ade = root / 'ADEChallengeData2016'
    _rgb(ade / 'images' / 'validation' / 'ADE_val_1.jpg')
    _label_png(ade / 'annotations' / 'validation' / 'ADE_val_1.png', _blocks(1, 150))
    _rgb(root / 'pairs' / 'img' / 'p.jpg')
    _label_png(root / 'pairs' / 'label' / 'p.png', _blocks(2, 255), palette=True)
    return root


def _write_classification(root):
    for name, value in (('cat', 10), ('dog', 200)):
        _rgb(root / 'train' / name / f'{name}_1.png', value)
        _rgb(root / 'train' / name / 'nested' / f'{name}_2.jpg', value, mode='L')
    (root / 'list.txt').write_text('cat/cat_1.png 4\ndog/nested/dog_2.jpg 999\n')
    return root


def _flip_x(example):
    img, bbox, label = example
    return flip(img, x_flip=True), flip_bbox(bbox, img.shape[1:], x_flip=True), label


BBOX = {
    'voc': lambda r: datasets.VOCBboxDataset(_write_voc(r)),
    'voc_difficult': lambda r: datasets.VOCBboxDataset(_write_voc(r), use_difficult=True,
                                                       return_difficult=True),
    'coco': lambda r: datasets.COCOBboxDataset.from_json(*_write_coco(r)),
    'coco_crowded': lambda r: datasets.COCOBboxDataset.from_json(
        *_write_coco(r), use_crowded=True, return_crowded=True, return_area=True),
    'concatenated': lambda r: datasets.ConcatenatedDataset(
        datasets.VOCBboxDataset(_write_voc(r / 'v')),
        datasets.COCOBboxDataset.from_json(*_write_coco(r / 'c'))),
    'sub_random': lambda r: datasets.split_dataset_random(
        datasets.VOCBboxDataset(_write_voc(r)), 2, seed=0)[0],
    'transform_flip': lambda r: datasets.TransformDataset(
        datasets.VOCBboxDataset(_write_voc(r)), _flip_x),
}


@pytest.mark.parametrize('make', BBOX.values(), ids=BBOX.keys())
def test_bbox_datasets(tmp_path, make):
    dataset = make(tmp_path)
    assert_is_bbox_dataset(dataset, n_fg_class=len(_label_names(dataset)))


def _label_names(dataset):
    while not hasattr(dataset, 'label_names'):
        dataset = getattr(dataset, '_dataset', None) or dataset._datasets[0]
    return dataset.label_names


def test_voc_with_its_own_names_and_the_20_classes(tmp_path):
    root = _write_voc(tmp_path)
    assert_is_bbox_dataset(datasets.VOCBboxDataset(root), n_fg_class=20)
    own = datasets.VOCBboxDataset(root, label_names=('car', 'dog', 'person'),
                                  use_difficult=True)
    assert_is_bbox_dataset(own, n_fg_class=3)


SEMANTIC = {
    'voc': (lambda r: datasets.VOCSemanticSegmentationDataset(_write_voc(r)), 21),
    'camvid': (lambda r: datasets.CamVidDataset(
        _write_segmentation_layouts(r) / 'camvid', split='val'), 11),
    'cityscapes': (lambda r: datasets.CityscapesSemanticSegmentationDataset(
        _write_segmentation_layouts(r) / 'cityscapes', split='val'), 19),
    'ade20k': (lambda r: datasets.ADE20KSemanticSegmentationDataset(
        _write_segmentation_layouts(r) / 'ADEChallengeData2016', split='val'), 150),
    'image_label_directory': (lambda r: datasets.ImageLabelDirectoryDataset(
        _write_segmentation_layouts(r) / 'pairs' / 'img', r / 'pairs' / 'label',
        ignore_label=255), 3),
}


@pytest.mark.parametrize('make, n_class', SEMANTIC.values(), ids=SEMANTIC.keys())
def test_semantic_segmentation_datasets(tmp_path, make, n_class):
    assert_is_semantic_segmentation_dataset(make(tmp_path), n_class=n_class)


def test_semantic_check_catches_an_unmapped_ignore_value(tmp_path):
    _write_segmentation_layouts(tmp_path)
    raw = datasets.ImageLabelDirectoryDataset(tmp_path / 'pairs' / 'img',
                                              tmp_path / 'pairs' / 'label')
    with pytest.raises(AssertionError, match='example 0: label'):
        assert_is_semantic_segmentation_dataset(raw, n_class=3)


INSTANCE = {
    'voc': lambda r: datasets.VOCInstanceSegmentationDataset(_write_voc(r)),
    'coco': lambda r: datasets.COCOInstanceSegmentationDataset.from_json(*_write_coco(r)),
    'coco_crowded': lambda r: datasets.COCOInstanceSegmentationDataset.from_json(
        *_write_coco(r), use_crowded=True, return_crowded=True, return_area=True),
}


@pytest.mark.parametrize('make', INSTANCE.values(), ids=INSTANCE.keys())
def test_instance_segmentation_datasets(tmp_path, make):
    dataset = make(tmp_path)
    assert_is_instance_segmentation_dataset(dataset, n_fg_class=len(dataset.label_names))


def test_sbd_instance_segmentation(tmp_path):
    scipy_io = pytest.importorskip('scipy.io')
    for image_id, n_instance in (('a', 2), ('b', 0)):
        _rgb(tmp_path / 'img' / f'{image_id}.jpg')
        instance = _blocks(1, 2) if n_instance else numpy.zeros((H, W), numpy.uint8)
        categories = numpy.array([[15], [20]][:n_instance], numpy.uint8).reshape(-1, 1)
        (tmp_path / 'inst').mkdir(exist_ok=True)
        scipy_io.savemat(tmp_path / 'inst' / f'{image_id}.mat',
                         {'GTinst': {'Segmentation': instance, 'Categories': categories}})
    (tmp_path / 'val.txt').write_text('a\nb\n')
    dataset = datasets.SBDInstanceSegmentationDataset(tmp_path, split='val')
    assert_is_instance_segmentation_dataset(dataset, n_fg_class=20)


def test_label_datasets(tmp_path):
    root = _write_classification(tmp_path)
    folder = datasets.DirectoryParsingLabelDataset(root / 'train')
    assert len(folder) == 4
    assert_is_label_dataset(folder, n_class=len(folder.label_names))
    assert_is_label_dataset(datasets.DirectoryParsingLabelDataset(root / 'train', color=False),
                            n_class=2, color=False)
    listed = datasets.LabeledImageDataset(root / 'list.txt', root=root / 'train')
    assert_is_label_dataset(listed, n_class=1000)
    with pytest.raises(AssertionError, match='example 1: label: .*999'):
        assert_is_label_dataset(listed, n_class=10)
    pairs = datasets.TupleDataset([folder[0][0], folder[3][0]],
                                  numpy.array([0, 1], numpy.int32))
    assert_is_label_dataset(pairs, n_class=2)


def test_camvid_real_test_split(shared_data):
    dataset = datasets.CamVidDataset(shared_data / 'camvid', split='test')
    assert len(dataset) == 233
    assert_is_semantic_segmentation_dataset(dataset, n_class=11, n_example=3)
