"""paste_masks against a straightforward reference: ChainerCV's segm_to_mask, one instance
at a time, with OpenCV's bilinear resize written out pixel by pixel (the
``mask_reference`` fixture)."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.instance_segmentation import mask_paste


def _case(seed, R=7, M=6, size=(23, 31)):
    rng = numpy.random.RandomState(seed)
    prob = rng.uniform(0, 1, (R, M, M)).astype(numpy.float32)
    H, W = size
    start = rng.uniform(-8, [W, H], (R, 2))
    side = rng.uniform(0.3, 20, (R, 2))
    bbox = numpy.concatenate([start, start + side], axis=1).astype(numpy.float32)
    return prob, bbox, size


@pytest.mark.parametrize('seed', range(4))
def test_paste_equals_the_reference(seed, mask_reference):
    prob, bbox, size = _case(seed)
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, size),
                                     mask_reference.paste(prob, bbox, size))


def test_paste_of_boxes_larger_than_the_grid_and_exact_halves(mask_reference):
    # boxes of 2x the padded grid (exact factors) and boxes half its size
    prob = numpy.random.RandomState(5).uniform(0, 1, (3, 4, 4)).astype(numpy.float32)
    bbox = numpy.array([[2, 3, 14, 15], [0, 0, 2, 2], [5.5, 1.5, 9.5, 4.5]], numpy.float32)
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, (20, 18)),
                                     mask_reference.paste(prob, bbox, (20, 18)))


@pytest.mark.parametrize('seed', range(4))
def test_torchvision_paste_equals_the_reference(seed, mask_reference):
    prob, bbox, size = _case(seed)
    numpy.testing.assert_array_equal(mask_paste.paste_masks_torchvision(prob, bbox, size),
                                     mask_reference.paste_torchvision(prob, bbox, size))


@pytest.mark.reference
def test_torchvision_paste_equals_torchvision(torchvision):
    import torch
    from torchvision.models.detection import roi_heads

    prob, bbox, size = _case(9, R=12)
    expected = roi_heads.paste_masks_in_image(torch.from_numpy(prob)[:, None],
                                              torch.from_numpy(bbox), size)[:, 0] >= 0.5
    numpy.testing.assert_array_equal(mask_paste.paste_masks_torchvision(prob, bbox, size),
                                     expected.numpy())


def test_paste_of_no_instance():
    masks = mask_paste.paste_masks(numpy.zeros((0, 28, 28), numpy.float32),
                                   numpy.zeros((0, 4), numpy.float32), (5, 7))
    assert masks.shape == (0, 5, 7) and masks.dtype == bool


def test_paste_in_chunks_equals_one_pass(monkeypatch):
    prob, bbox, size = _case(7, R=9)
    whole = mask_paste.paste_masks(prob, bbox, size)
    monkeypatch.setattr(mask_paste, '_CHUNK_ELEMENTS', 2 * size[0] * size[1])
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, size), whole)


def test_paste_on_the_device(device, mask_reference):
    prob, bbox, size = _case(1)
    on_device = backend.to_device(prob, device)
    masks = mask_paste.paste_masks(on_device, backend.to_device(bbox, device), size)
    assert backend.get_device_from_array(masks) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(masks),
                                     mask_reference.paste(prob, bbox, size))


@pytest.mark.parametrize('prob_shape, bbox_shape, size, match', [
    ((2, 4), (2, 4), (5, 5), 'prob'),
    ((2, 4, 4), (3, 4), (5, 5), 'bbox'),
    ((2, 4, 4), (2, 4), (5,), 'size'),
])
def test_bad_arguments_are_named(prob_shape, bbox_shape, size, match):
    with pytest.raises(ValueError, match=match):
        mask_paste.paste_masks(numpy.zeros(prob_shape, numpy.float32),
                               numpy.zeros(bbox_shape, numpy.float32), size)
