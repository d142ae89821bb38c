"""mask_targets against ChainerCV's mask_to_segm written out RoI by RoI (mask_reference)."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.instance_segmentation.mask_rcnn import mask_targets


def _case(seed, n_roi=12, n_gt=3, size=(40, 52)):
    rng = numpy.random.RandomState(seed)
    H, W = size
    gt_masks = numpy.zeros((n_gt, H, W), bool)
    blobs = []
    for g in range(n_gt):  # a blob and some noise
        y0, x0 = rng.randint(0, H - 10), rng.randint(0, W - 10)
        y1, x1 = y0 + rng.randint(5, 25), x0 + rng.randint(5, 30)
        gt_masks[g, y0:y1, x0:x1] = True
        gt_masks[g] ^= rng.uniform(size=(H, W)) < 0.05
        blobs.append((x0, y0, x1, y1))
    index = rng.randint(0, n_gt, n_roi)
    # half the RoIs near their mask's blob, half anywhere (some past the border)
    near = numpy.array(blobs, numpy.float64)[index] + rng.uniform(-4, 4, (n_roi, 4))
    start = rng.uniform(-10, [W, H], (n_roi, 2))
    anywhere = numpy.concatenate([start, start + rng.uniform(0.4, 30, (n_roi, 2))], axis=1)
    rois = numpy.where(numpy.arange(n_roi)[:, None] % 2 == 0, near, anywhere)
    return gt_masks, rois.astype(numpy.float32), index


@pytest.mark.parametrize('seed', range(3))
@pytest.mark.parametrize('segm_size', [4, 7])
def test_targets_equal_the_reference(seed, segm_size, mask_reference):
    gt_masks, rois, index = _case(seed)
    expected = mask_reference.mask_to_segm(gt_masks, rois, index, segm_size)
    targets = mask_targets.mask_targets(gt_masks, rois, index, segm_size)
    assert targets.dtype == numpy.float32 and targets.shape == expected.shape
    assert 0 < expected.sum() < expected.size  # neither all in nor all out
    numpy.testing.assert_array_equal(targets, expected)


def test_targets_of_rois_off_the_image_are_zero():
    gt_masks = numpy.ones((1, 10, 10), bool)
    rois = numpy.array([[-30, -30, -12, -12], [11, 2, 20, 8], [3, 3, 3, 3]], numpy.float32)
    targets = mask_targets.mask_targets(gt_masks, rois, numpy.zeros(3, int), 4)
    assert not targets.any()


def test_targets_on_the_device(device, mask_reference):
    gt_masks, rois, index = _case(5)
    targets = mask_targets.mask_targets(backend.to_device(gt_masks, device),
                                        backend.to_device(rois, device),
                                        backend.to_device(index, device), 6)
    assert backend.get_device_from_array(targets) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(targets),
                                     mask_reference.mask_to_segm(gt_masks, rois, index, 6))


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match='gt_masks'):
        mask_targets.mask_targets(numpy.zeros((4, 4), bool), numpy.zeros((1, 4)),
                                  numpy.zeros(1, int), 4)
    with pytest.raises(ValueError, match='rois, index'):
        mask_targets.mask_targets(numpy.zeros((1, 4, 4), bool), numpy.zeros((2, 4)),
                                  numpy.zeros(1, int), 4)
