import numpy
import pytest

from cvzoo.models.segmentation.augmentation import SegmentationAugmentation


def _pair(rng, size=(12, 16)):
    label = rng.integers(0, 5, size).astype(numpy.int32)
    img = numpy.repeat(label[None].astype(numpy.float32) * 10, 3, axis=0)
    return img, label


@pytest.mark.parametrize('seed', range(5))
def test_crop_and_flip_keep_image_and_label_aligned(seed):
    rng = numpy.random.default_rng(seed)
    numpy.random.seed(seed)
    img, label = SegmentationAugmentation((8, 10), scale_range=(1, 1))(_pair(rng))
    assert img.shape == (3, 8, 10) and label.shape == (8, 10) and label.dtype == numpy.int32
    numpy.testing.assert_array_equal(img[0], label * 10)


def test_scale_resizes_labels_by_nearest_neighbour():
    rng = numpy.random.default_rng(0)
    numpy.random.seed(0)
    img, label = _pair(rng)
    out_img, out_label = SegmentationAugmentation((20, 20), scale_range=(2, 2), flip=False)(
        (img, label))
    assert set(numpy.unique(out_label)) <= set(numpy.unique(label))  # no blended labels


def test_padding_is_ignored_in_labels():
    numpy.random.seed(0)
    img = numpy.ones((3, 4, 5), numpy.float32)
    label = numpy.zeros((4, 5), numpy.int32)
    out_img, out_label = SegmentationAugmentation((6, 7), scale_range=(1, 1), flip=False,
                                                  pad_value=-3.0)((img, label))
    assert (out_label == -1).sum() == 6 * 7 - 4 * 5
    numpy.testing.assert_array_equal(out_img[0] == -3.0, out_label == -1)
