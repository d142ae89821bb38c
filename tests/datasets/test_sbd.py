"""SBD instance segmentation on a tiny benchmark_RELEASE/dataset layout with .mat files."""

import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.datasets import SBDInstanceSegmentationDataset, voc_bbox_label_names

scipy_io = pytest.importorskip('scipy.io')
H, W = 6, 8


def _instances():
    instance = numpy.zeros((H, W), numpy.uint8)
    instance[1:3, 1:4] = 1
    instance[3:6, 5:8] = 2
    return instance


def write_sbd(root, instance=None, categories=((15,), (12,)), split='train'):
    """An SBD layout with one image 'x' whose instances 1 and 2 are a person and a dog."""
    for folder in ('img', 'inst'):
        (root / folder).mkdir(parents=True, exist_ok=True)
    Image.fromarray(numpy.full((H, W, 3), 50, numpy.uint8)).save(root / 'img' / 'x.jpg')
    struct = {'Segmentation': _instances() if instance is None else instance,
              'Categories': numpy.array(categories, numpy.uint8).reshape(-1, 1),
              'Boundaries': numpy.zeros((len(categories), 1), object)}
    scipy_io.savemat(root / 'inst' / 'x.mat', {'GTinst': struct})
    (root / f'{split}.txt').write_text('x\n')
    return root


def test_masks_and_labels(tmp_path):
    img, mask, label = SBDInstanceSegmentationDataset(write_sbd(tmp_path))[0]
    assert img.shape == (3, H, W) and mask.shape == (2, H, W) and mask.dtype == bool
    numpy.testing.assert_array_equal(mask[0], _instances() == 1)
    numpy.testing.assert_array_equal(mask[1], _instances() == 2)
    assert label.dtype == numpy.int32
    assert [voc_bbox_label_names[k] for k in label] == ['person', 'dog']


def test_no_instance(tmp_path):
    root = write_sbd(tmp_path, instance=numpy.zeros((H, W), numpy.uint8), categories=())
    _, mask, label = SBDInstanceSegmentationDataset(root)[0]
    assert mask.shape == (0, H, W) and label.shape == (0,)


def test_missing_category_and_field_name_the_file(tmp_path):
    root = write_sbd(tmp_path, categories=((15,),))
    with pytest.raises(errors.CorruptFileError, match=r'x\.mat.*Categories.*instance 2'):
        SBDInstanceSegmentationDataset(root)[0]
    scipy_io.savemat(root / 'inst' / 'x.mat', {'GTcls': {'Segmentation': _instances()}})
    with pytest.raises(errors.CorruptFileError, match=r'x\.mat.*GTinst'):
        SBDInstanceSegmentationDataset(root)[0]
    (root / 'inst' / 'x.mat').write_bytes(b'not a mat file')
    with pytest.raises(errors.CorruptFileError, match=r'x\.mat'):
        SBDInstanceSegmentationDataset(root)[0]


def test_missing_split_says_what_is_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match='val.txt'):
        SBDInstanceSegmentationDataset(write_sbd(tmp_path), split='val')
