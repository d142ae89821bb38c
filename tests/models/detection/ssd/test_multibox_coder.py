"""MultiboxCoder: anchor counts and values by hand, encoding by hand, round trips."""

import numpy
import pytest

from cvzoo.models.detection.ssd import multibox_coder, ssd


@pytest.mark.parametrize('settings, grids, count', [
    (ssd.SSD300_SETTINGS, (38, 19, 10, 5, 3, 1), 8732),
    (ssd.SSD512_SETTINGS, (64, 32, 16, 8, 4, 2, 1), 24564),
], ids=['ssd300', 'ssd512'])
def test_anchor_count(settings, grids, count):
    anchors = multibox_coder.generate_default_bbox(
        grids, settings['aspect_ratios'], settings['steps'], settings['sizes'])
    assert anchors.shape == (count, 4) and anchors.dtype == numpy.float32


def test_ssd300_anchors_by_hand():
    s = ssd.SSD300_SETTINGS
    anchors = multibox_coder.generate_default_bbox((38, 19, 10, 5, 3, 1), s['aspect_ratios'],
                                                   s['steps'], s['sizes'])
    r2 = numpy.sqrt(2)
    # first location of conv4_3: centre (4, 4); sides 30, sqrt(30 * 60), 30 * r2 wide, tall
    numpy.testing.assert_allclose(anchors[:4], [
        [4, 4, 30, 30], [4, 4, numpy.sqrt(1800), numpy.sqrt(1800)],
        [4, 4, 30 * r2, 30 / r2], [4, 4, 30 / r2, 30 * r2]], rtol=1e-6)
    # second location of conv4_3 is one step to the right (x first, rows outer)
    numpy.testing.assert_allclose(anchors[4], [12, 4, 30, 30])
    numpy.testing.assert_allclose(anchors[38 * 4], [4, 12, 30, 30])
    # conv7 (19x19, 6 anchors) starts after 38 * 38 * 4 anchors; ratio 3 comes last
    first = 38 * 38 * 4
    r3 = numpy.sqrt(3)
    numpy.testing.assert_allclose(anchors[first:first + 6], [
        [8, 8, 60, 60], [8, 8, numpy.sqrt(60 * 111), numpy.sqrt(60 * 111)],
        [8, 8, 60 * r2, 60 / r2], [8, 8, 60 / r2, 60 * r2],
        [8, 8, 60 * r3, 60 / r3], [8, 8, 60 / r3, 60 * r3]], rtol=1e-5)
    # the single conv11_2 location: centre 150, sides 264 and sqrt(264 * 315)
    numpy.testing.assert_allclose(anchors[-4:-2], [
        [150, 150, 264, 264], [150, 150, numpy.sqrt(264 * 315), numpy.sqrt(264 * 315)]],
        rtol=1e-6)


def _coder():
    # one 2x2 map of step 10 and sizes 10, 40: squares of side 10 and 20 at 4 centres
    return multibox_coder.MultiboxCoder((2,), ((),), (10,), (10, 40))


def test_encode_by_hand():
    coder = _coder()
    numpy.testing.assert_allclose(coder.default_bbox[:2], [[5, 5, 10, 10], [5, 5, 20, 20]])
    bbox = numpy.array([[0, 0, 12, 8]], numpy.float32)  # centre (6, 4), size 12 x 8
    mb_loc, mb_label = coder.encode(bbox, numpy.array([2]))
    # IoU with anchor 0 ([0, 0, 10, 10]) is 80 / 116 >= 0.5; anchor 1 ([-5,-5,15,15]) 96/400
    assert mb_label.tolist() == [3, 0, 0, 0, 0, 0, 0, 0]
    numpy.testing.assert_allclose(mb_loc[0], [
        (6 - 5) / (0.1 * 10), (4 - 5) / (0.1 * 10),
        numpy.log(12 / 10) / 0.2, numpy.log(8 / 10) / 0.2], rtol=1e-5)
    assert not mb_loc[1:].any()
    assert mb_loc.dtype == numpy.float32 and mb_label.dtype == numpy.int32


def test_best_anchor_is_forced_below_threshold():
    coder = _coder()
    # a box overlapping every anchor by less than 0.5: its best anchor is still positive
    bbox = numpy.array([[4, 4, 16, 16]], numpy.float32)
    _, mb_label = coder.encode(bbox, numpy.array([0]))
    # the 20x20 squares overlap it by 121 / (144 + 400 - 121), the 10x10 ones by 36 / 208
    assert 121 / 423 < 0.5
    assert mb_label.tolist() == [0, 1, 0, 0, 0, 0, 0, 0]  # the first of the tied best


def test_empty_bbox_is_all_background():
    mb_loc, mb_label = _coder().encode(numpy.zeros((0, 4), numpy.float32),
                                       numpy.zeros(0, numpy.int32))
    assert mb_loc.shape == (8, 4) and not mb_loc.any() and not mb_label.any()


def test_encode_decode_round_trip():
    s = ssd.SSD300_SETTINGS
    coder = multibox_coder.MultiboxCoder((38, 19, 10, 5, 3, 1), s['aspect_ratios'],
                                         s['steps'], s['sizes'])
    bbox = numpy.array([[10, 20, 120, 90], [150, 100, 290, 280], [30, 200, 60, 260]],
                       numpy.float32)
    mb_loc, mb_label = coder.encode(bbox, numpy.array([0, 5, 7]))
    positive = mb_label > 0
    assert set(mb_label[positive].tolist()) == {1, 6, 8}
    decoded = coder.decode_bbox(mb_loc)
    matched = bbox[numpy.array([0, 5, 7]).searchsorted(mb_label[positive] - 1)]
    numpy.testing.assert_allclose(decoded[positive], matched, atol=1e-3)


def test_decode_scores_are_softmax_without_background():
    coder = _coder()
    mb_conf = numpy.random.RandomState(0).randn(2, 8, 4).astype(numpy.float32) * 3
    bbox, score = coder.decode(numpy.zeros((2, 8, 4), numpy.float32), mb_conf)
    expected = numpy.exp(mb_conf) / numpy.exp(mb_conf).sum(axis=2, keepdims=True)
    numpy.testing.assert_allclose(score, expected[..., 1:], rtol=1e-5)
    numpy.testing.assert_allclose(bbox[0, :2], [[0, 0, 10, 10], [-5, -5, 15, 15]])


@pytest.mark.parametrize('kwargs, name', [
    ({'steps': (1, 2)}, 'steps'), ({'sizes': (1, 2, 3)}, 'sizes'),
    ({'aspect_ratios': ()}, 'aspect_ratios'), ({'variance': (0.1,)}, 'variance'),
], ids=['steps', 'sizes', 'aspect_ratios', 'variance'])
def test_bad_settings_name_the_argument(kwargs, name):
    settings = {'grids': (2,), 'aspect_ratios': ((),), 'steps': (10,), 'sizes': (10, 40)}
    settings.update(kwargs)
    with pytest.raises(ValueError, match=name):
        multibox_coder.MultiboxCoder(**settings)
