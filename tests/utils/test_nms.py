import numpy
import pytest

from cvzoo.utils import nms as nms_module
from cvzoo.utils.nms import batched_non_maximum_suppression, non_maximum_suppression


def _greedy_reference(bbox, thresh, score=None, limit=None):
    """Plain greedy NMS, one box at a time (ChainerCV's semantics)."""
    order = numpy.arange(len(bbox)) if score is None else numpy.argsort(-score, kind='stable')
    kept = []
    area = numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1)
    for i in order:
        if kept:
            tl = numpy.maximum(bbox[i, :2], bbox[kept, :2])
            br = numpy.minimum(bbox[i, 2:], bbox[kept, 2:])
            inter = numpy.prod(numpy.maximum(br - tl, 0), axis=1)
            iou = inter / (area[i] + area[kept] - inter)
            if ((inter > 0) & (iou >= thresh)).any():
                continue
        kept.append(i)
        if limit is not None and len(kept) == limit:
            break
    return numpy.array(kept, numpy.int32)


def _random_boxes(rng, n, extent=100.0, clustered=True):
    if clustered:
        centres = rng.uniform(0, extent, (max(n // 20, 1), 2))
        centre = centres[rng.integers(0, len(centres), n)] + rng.normal(0, 3, (n, 2))
    else:
        centre = rng.uniform(0, extent, (n, 2))
    size = rng.uniform(5, 30, (n, 2))
    bbox = numpy.concatenate([centre - size / 2, centre + size / 2], axis=1)
    return bbox.astype(numpy.float32), rng.uniform(size=n).astype(numpy.float32)


@pytest.mark.parametrize('n, thresh, clustered', [
    (50, 0.5, True), (300, 0.3, True), (300, 0.7, False), (1300, 0.5, True),
    (1300, 0.45, False),
], ids=['small', 'low-thresh', 'sparse', 'several-blocks', 'several-blocks-sparse'])
def test_matches_greedy_reference(rng, n, thresh, clustered):
    bbox, score = _random_boxes(rng, n, clustered=clustered)
    kept = non_maximum_suppression(bbox, thresh, score)
    assert kept.dtype == numpy.int32
    numpy.testing.assert_array_equal(kept, _greedy_reference(bbox, thresh, score))


def test_small_block_size_still_exact(rng, monkeypatch):
    monkeypatch.setattr(nms_module, '_BLOCK', 7)
    bbox, score = _random_boxes(rng, 200)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.4, score),
                                     _greedy_reference(bbox, 0.4, score))


def test_hand_computed_and_no_score():
    bbox = numpy.array([[0, 0, 10, 10], [0, 0, 10, 9], [0, 0, 10, 4], [50, 50, 60, 60]],
                       numpy.float32)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5), [0, 2, 3])
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.95), [0, 1, 2, 3])
    # IoU of box 0 and 1 is exactly 0.9: >= thresh suppresses
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.9), [0, 2, 3])
    score = numpy.array([0.1, 0.2, 0.3, 0.4], numpy.float32)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5, score), [3, 2, 1])


@pytest.mark.parametrize('limit', [0, 1, 3, 1000], ids=['zero', 'one', 'three', 'large'])
def test_limit(rng, limit):
    bbox, score = _random_boxes(rng, 600)
    expected = _greedy_reference(bbox, 0.5, score)[:limit]
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5, score, limit), expected)


def test_empty_input_and_bad_arguments():
    empty = non_maximum_suppression(numpy.zeros((0, 4), numpy.float32), 0.5)
    assert empty.shape == (0,) and empty.dtype == numpy.int32
    with pytest.raises(ValueError, match='bbox'):
        non_maximum_suppression(numpy.zeros((3, 3)), 0.5)
    with pytest.raises(ValueError, match='score'):
        non_maximum_suppression(numpy.zeros((3, 4)), 0.5, numpy.zeros(2))
    with pytest.raises(ValueError, match='limit'):
        non_maximum_suppression(numpy.zeros((3, 4)), 0.5, limit=-1)
    with pytest.raises(TypeError, match='thresh'):
        non_maximum_suppression(numpy.zeros((3, 4)), '0.5')


def test_batched_equals_per_class(rng):
    bbox, score = _random_boxes(rng, 800)
    label = rng.integers(0, 5, 800)
    kept = batched_non_maximum_suppression(bbox, score, label, 0.5)
    parts = []
    for c in range(5):
        index = numpy.nonzero(label == c)[0]
        parts.append(index[_greedy_reference(bbox[index], 0.5, score[index])])
    expected = numpy.concatenate(parts)
    expected = expected[numpy.argsort(-score[expected], kind='stable')]
    numpy.testing.assert_array_equal(kept, expected)
    numpy.testing.assert_array_equal(
        batched_non_maximum_suppression(bbox, score, label, 0.5, limit=7), expected[:7])
    with pytest.raises(ValueError, match='label'):
        batched_non_maximum_suppression(bbox, score, label[:3], 0.5)
