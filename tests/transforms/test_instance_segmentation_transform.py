"""MaskRCNNTransform and drop_crowded: crowds and empty masks go, image, boxes and masks
are resized and flipped together; the Mask R-CNN converter (convert.PadImages with the
model's pad_batch) pads a batch of two sizes."""

import numpy
import pytest

from cvzoo.core.training import convert
from cvzoo.transforms.image.resize import resize
from cvzoo.transforms.instance_segmentation_transform import MaskRCNNTransform, drop_crowded
from cvzoo.utils.bbox import mask_to_bbox


class _DoublingModel:
    """prepare() doubles the image's size; pad_batch() pads to multiples of 32."""

    pad_stride = 32

    def prepare(self, img):
        return resize(img, (img.shape[1] * 2, img.shape[2] * 2)) - 100

    def pad_batch(self, prepared):
        size = -(-numpy.max([x.shape[1:] for x in prepared], axis=0) // 32) * 32
        x = numpy.zeros((len(prepared), 3) + tuple(size), numpy.float32)
        for i, img in enumerate(prepared):
            x[i, :, :img.shape[1], :img.shape[2]] = img
        return x


def _example():
    img = numpy.zeros((3, 10, 16), numpy.float32)
    img[:, 2:5, 1:4] = 200  # the first object, marked in the image to follow the flip
    mask = numpy.zeros((4, 10, 16), bool)
    mask[0, 2:5, 1:4] = True
    mask[1, 6:10, 8:15] = True
    mask[2, :, :] = True       # a crowd region
    label = numpy.array([2, 0, 1, 1], numpy.int32)
    crowded = numpy.array([False, False, True, False])  # the last mask is empty
    return img, mask, label, crowded


@pytest.mark.parametrize('seed', range(4))
def test_image_boxes_and_masks_stay_together(seed):
    transform = MaskRCNNTransform(_DoublingModel(), seed=seed)
    x, bbox, label, mask, size = transform(_example())
    assert x.shape == (3, 20, 32) and size == (20, 32)
    assert label.tolist() == [2, 0] and label.dtype == numpy.int32
    assert mask.shape == (2, 20, 32) and mask.dtype == bool
    assert bbox.dtype == numpy.float32
    numpy.testing.assert_array_equal(bbox, mask_to_bbox(mask))
    # the first object's pixels are bright wherever it was flipped to
    assert (x[0][mask[0]] > 0).all() and (x[0][~mask[0]] < 0).all()


def test_flips_happen_about_half_the_time():
    transform = MaskRCNNTransform(_DoublingModel(), seed=0)
    flipped = [transform(_example())[1][0, 0] > 16 for _ in range(40)]
    assert 10 < sum(flipped) < 30


def test_masks_of_another_size_are_named():
    img, mask, label, crowded = _example()
    with pytest.raises(ValueError, match='mask'):
        MaskRCNNTransform(_DoublingModel())((img, mask[:, :8], label, crowded))


def test_drop_crowded_keeps_three_field_examples():
    img, mask, label, crowded = _example()
    assert drop_crowded((img, mask, label))[1] is mask
    assert drop_crowded((img, mask, label, crowded, numpy.ones(4)))[2].tolist() == [2, 0, 1]


def test_padded_batch_of_two_sizes():
    model = _DoublingModel()
    transform = MaskRCNNTransform(model)
    small = _example()
    large = (numpy.zeros((3, 20, 12), numpy.float32), numpy.ones((1, 20, 12), bool),
             numpy.array([1], numpy.int32))
    converter = convert.PadImages(model.pad_batch, host_fields=(3, 4))
    x, bboxes, labels, masks, sizes = converter([transform(small), transform(large)])
    assert x.shape == (2, 3, 64, 32)
    assert sizes == [(20, 32), (40, 24)]
    assert [m.shape for m in masks] == [(2, 20, 32), (1, 40, 24)]
    assert [len(b) for b in bboxes] == [2, 1] and labels[1].tolist() == [1]
