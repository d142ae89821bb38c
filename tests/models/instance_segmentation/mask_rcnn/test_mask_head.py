"""MaskHead: shapes, level assignment, the pooled features it convolves, re-made classes."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend, config
from cvzoo.models.instance_segmentation.mask_rcnn import mask_head

SCALES = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64)


def _maps(rng, B=2, size=(64, 96), channels=8):
    H, W = size
    return [rng.standard_normal((B, channels, int(H * s), int(W * s))).astype(numpy.float32)
            for s in SCALES]


def _rois():
    rois = numpy.array([[0, 0, 20, 30], [10, 5, 90, 60], [1, 2, 5, 7], [30, 8, 95, 63]],
                       numpy.float32)
    return rois, numpy.array([0, 1, 1, 0], numpy.int32)


def test_logits_shape_and_order(device):
    numpy.random.seed(0)
    head = mask_head.MaskHead(4, SCALES, in_channels=8).to_device(device)
    hs = [backend.to_device(h, device) for h in _maps(numpy.random.RandomState(1))]
    rois, roi_indices = (backend.to_device(a, device) for a in _rois())
    with config.using_config('train', False):
        segm = head(hs, rois, roi_indices).array
        single = head(hs, rois[2:3], roi_indices[2:3]).array
    assert segm.shape == (4, 4, 28, 28)
    numpy.testing.assert_allclose(backend.to_numpy(segm[2]), backend.to_numpy(single[0]),
                                  rtol=1e-5, atol=1e-6)


def test_levels_follow_the_roi_size():
    head = mask_head.MaskHead(2, SCALES, in_channels=8)
    sides = numpy.array([10, 112, 224, 448, 900, 5000], numpy.float32)
    rois = numpy.stack([numpy.zeros_like(sides), numpy.zeros_like(sides), sides, sides], 1)
    numpy.testing.assert_array_equal(head.distribute(rois), [0, 1, 2, 3, 3, 3])


def test_pooled_features_are_roi_align_14x14_from_the_level():
    head = mask_head.MaskHead(2, SCALES, in_channels=8)
    hs = _maps(numpy.random.RandomState(2))
    rois, roi_indices = _rois()
    pooled = head.pool(hs, rois, roi_indices).array
    for i, level in enumerate(head.distribute(rois)):
        expected = F.roi_align_2d(hs[level], rois[i:i + 1], roi_indices[i:i + 1], 14,
                                  SCALES[level], 2).array
        numpy.testing.assert_allclose(pooled[i], expected[0], rtol=1e-6)


def test_no_roi_gives_no_logits():
    head = mask_head.MaskHead(3, SCALES, in_channels=8)
    segm = head(_maps(numpy.random.RandomState(3)), numpy.zeros((0, 4), numpy.float32),
                numpy.zeros(0, numpy.int32))
    assert getattr(segm, 'shape') == (0, 3, 28, 28)


def test_reset_classes_re_makes_seg_only():
    head = mask_head.MaskHead(81, SCALES)
    conv1 = head.conv1.conv.W.array.copy()
    head.reset_classes(5)
    assert head.seg.W.shape == (5, 256, 1, 1) and head.n_class == 5
    numpy.testing.assert_array_equal(head.conv1.conv.W.array, conv1)
    assert sorted(name for name, _ in head.namedparams() if 'seg' in name) == \
        ['/seg/W', '/seg/b']


@pytest.mark.parametrize('layer', ['conv1/conv', 'conv5', 'seg'])
def test_chainercv_parameter_names(layer):
    names = {name for name, _ in mask_head.MaskHead(3, SCALES).namedparams()}
    assert {f'/{layer}/W', f'/{layer}/b'} <= names
