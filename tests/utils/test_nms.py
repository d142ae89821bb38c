import numpy
import pytest

from cvzoo.core import backend
from cvzoo.utils import nms as nms_module
from cvzoo.utils.nms import batched_non_maximum_suppression, non_maximum_suppression


def _greedy_reference(bbox, thresh, score=None, limit=None):
    """Plain greedy NMS, one box at a time (ChainerCV's semantics).

    The IoU test is written as in cvzoo (inter * (1 + t) >= t * (a + b), in the boxes'
    dtype) so that boxes with IoU exactly at the threshold agree too; thresh <= 0 makes
    every pair a hit, as ChainerCV's ``iou >= thresh`` does.
    """
    order = numpy.arange(len(bbox)) if score is None else numpy.argsort(-score, kind='stable')
    if not numpy.issubdtype(bbox.dtype, numpy.floating):
        bbox = bbox.astype(numpy.float32)
    kept = []
    area = numpy.prod(numpy.maximum(bbox[:, 2:] - bbox[:, :2], 0), axis=1)
    for i in order:
        if kept and thresh <= 0:
            continue
        if kept:
            size = numpy.minimum(bbox[i, 2:], bbox[kept, 2:])
            size -= numpy.maximum(bbox[i, :2], bbox[kept, :2])
            inter = numpy.prod(numpy.maximum(size, 0), axis=1)
            hit = inter * (1 + thresh) >= thresh * (area[i] + area[kept])
            if (hit & (inter > 0)).any():
                continue
        kept.append(i)
        if limit is not None and len(kept) == limit:
            break
    return numpy.array(kept, numpy.int32)


def _per_class_reference(bbox, score, label, thresh, limit=None):
    parts = []
    for value in numpy.unique(label):
        index = numpy.nonzero(label == value)[0]
        parts.append(index[_greedy_reference(bbox[index], thresh, score[index])])
    expected = numpy.sort(numpy.concatenate(parts))  # equal scores: lower index first
    return expected[numpy.argsort(-score[expected], kind='stable')][:limit]


def _random_boxes(rng, n, kind, extent=100.0):
    """Boxes of one kind of input, with float32 scores."""
    if kind == 'clustered':
        centres = rng.uniform(0, extent, (max(n // 20, 1), 2))
        centre = centres[rng.integers(0, len(centres), n)] + rng.normal(0, 3, (n, 2))
    else:
        centre = rng.uniform(0, extent * 3, (n, 2))
    size = rng.uniform(5, 30, (n, 2))
    if kind == 'mixed-sizes':
        size *= rng.choice([0.1, 1, 10], (n, 1))
    bbox = numpy.concatenate([centre - size / 2, centre + size / 2], axis=1)
    score = rng.uniform(size=n)
    if kind == 'integer-ties':
        bbox, score = numpy.round(bbox / 4) * 4, numpy.round(score * 4) / 4
    if kind == 'duplicates':
        bbox[: n // 3] = bbox[rng.integers(n // 3, n, n // 3)]
    if kind == 'degenerate':
        bbox[: n // 4, 2] = bbox[: n // 4, 0]
        bbox[n // 4: n // 3, 3] = bbox[n // 4: n // 3, 1] - 1
    if kind == 'far-from-origin':
        bbox += 1e5
    return bbox.astype(numpy.float32), score.astype(numpy.float32)


KINDS = ['clustered', 'sparse', 'mixed-sizes', 'integer-ties', 'duplicates', 'degenerate',
         'far-from-origin']
THRESHES = [0.0, 0.3, 0.5, 0.7, 1.0]


@pytest.mark.parametrize('thresh', THRESHES, ids=[f't{t}' for t in THRESHES])
@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('n', [40, 700], ids=['dense', 'sparse-graph'])
def test_matches_greedy_reference(rng, n, kind, thresh):
    bbox, score = _random_boxes(rng, n, kind)
    kept = non_maximum_suppression(bbox, thresh, score)
    assert kept.dtype == numpy.int32
    numpy.testing.assert_array_equal(kept, _greedy_reference(bbox, thresh, score))


@pytest.mark.parametrize('thresh', [0.3, 0.5, 0.7], ids=['t0.3', 't0.5', 't0.7'])
@pytest.mark.parametrize('kind', ['clustered', 'sparse', 'integer-ties', 'degenerate'])
def test_batched_matches_per_class_reference(rng, kind, thresh):
    bbox, score = _random_boxes(rng, 900, kind)
    label = rng.choice([-3, 0, 7, 1000], 900)
    expected = _per_class_reference(bbox, score, label, thresh)
    numpy.testing.assert_array_equal(
        batched_non_maximum_suppression(bbox, score, label, thresh), expected)
    numpy.testing.assert_array_equal(
        batched_non_maximum_suppression(bbox, score, label, thresh, limit=7), expected[:7])


def test_batched_thresh_zero_keeps_the_best_of_each_class(rng):
    bbox, score = _random_boxes(rng, 300, 'sparse')
    label = rng.integers(0, 4, 300)
    kept = batched_non_maximum_suppression(bbox, score, label, 0.0)
    numpy.testing.assert_array_equal(kept, _per_class_reference(bbox, score, label, 0.0))
    assert len(kept) == 4


@pytest.mark.parametrize('setting, value', [
    ('_CHUNK', 7), ('_DENSE_MAX', 0), ('_HEAD_FRACTION', 0.01), ('_HEAD_FRACTION', 1.0),
], ids=['tiny-chunks', 'no-dense', 'small-head', 'all-head'])
@pytest.mark.parametrize('kind', ['clustered', 'sparse'])
def test_internal_settings_do_not_change_the_result(rng, monkeypatch, setting, value, kind):
    monkeypatch.setattr(nms_module, setting, value)
    for n in (1, 2, 5, 300):
        bbox, score = _random_boxes(rng, n, kind)
        label = rng.integers(0, 3, n)
        numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.4, score),
                                         _greedy_reference(bbox, 0.4, score))
        numpy.testing.assert_array_equal(batched_non_maximum_suppression(bbox, score, label, 0.4),
                                         _per_class_reference(bbox, score, label, 0.4))


@pytest.mark.filterwarnings('ignore:overflow encountered:RuntimeWarning')
@pytest.mark.parametrize('dtype', [numpy.float64, numpy.float16, numpy.int32],
                         ids=['float64', 'float16', 'int32'])
@pytest.mark.parametrize('thresh', [0.0005, 0.5], ids=['tiny-thresh', 't0.5'])
def test_other_dtypes_and_tiny_thresh(rng, dtype, thresh):
    bbox, score = _random_boxes(rng, 500, 'clustered')
    bbox = (bbox * 10).astype(dtype)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, thresh, score),
                                     _greedy_reference(bbox, thresh, score))


@pytest.mark.parametrize('offset', [0.0, 1e12], ids=['near-origin', 'far-from-origin'])
def test_float64_boxes_with_tiny_ones(rng, offset):
    bbox, score = _random_boxes(rng, 600, 'clustered')
    bbox = bbox.astype(numpy.float64) + offset
    bbox[:200, 2:] = bbox[:200, :2] + rng.uniform(1e-3, 1e-2, (200, 2))
    for thresh in (0.3, 0.7):
        numpy.testing.assert_array_equal(non_maximum_suppression(bbox, thresh, score),
                                         _greedy_reference(bbox, thresh, score))


@pytest.mark.filterwarnings('ignore::RuntimeWarning')
def test_huge_boxes_and_non_finite_coordinates(rng):
    bbox, score = _random_boxes(rng, 400, 'sparse')
    bbox[:3] = [[-1e30, -1e30, 1e30, 1e30], [0, 0, 1e6, 1], [0, 0, 1, 1e6]]
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.01, score),
                                     _greedy_reference(bbox, 0.01, score))
    bbox[3:6] = [[numpy.nan, 0, 10, 10], [0, -numpy.inf, 10, 10], [0, 0, numpy.inf, 10]]
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5, score),
                                     _greedy_reference(bbox, 0.5, score))


def test_pairs_at_the_threshold(rng):
    """Shifted copies of a box put the IoU at, and a few ulps around, each threshold."""
    base = numpy.array([[10, 20, 30, 60]], numpy.float32)
    threshes = numpy.array([0.3, 0.5, 0.7, 0.95, 1.0])
    # a shift by d along x gives IoU (20 - d) / (20 + d); along y, (40 - d) / (40 + d)
    at_thresh = (1 - threshes) / (1 + threshes) * numpy.array([[20], [40]])
    jitter = 1 + numpy.arange(-3, 4)[:, None, None] * 1e-7
    shift = numpy.concatenate([numpy.linspace(0, 20, 41), (at_thresh * jitter).ravel()])
    shift = shift.astype(numpy.float32)[:, None]
    parts = [base, base + shift * [1, 0, 1, 0], base + shift * [0, 1, 0, 1],
             base - shift * [1, 0, 1, 0], base * (1 + shift / 20)]
    bbox = numpy.concatenate(parts).astype(numpy.float32)
    for thresh in threshes:
        for _ in range(2):
            score = rng.permutation(len(bbox)).astype(numpy.float32)
            numpy.testing.assert_array_equal(non_maximum_suppression(bbox, thresh, score),
                                             _greedy_reference(bbox, thresh, score))


@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('thresh', [0.001, 0.3, 0.7, 1.0, 1 + 1e-9], ids=str)
def test_every_hit_lies_within_the_search_bounds(rng, thresh, dtype):
    """The pruning of the pair search is safe: each hit pair is inside the bounds.

    Pairs are drawn near the threshold (a box and a jittered, rescaled copy) and far
    from the origin, where rounding is the largest.
    """
    if thresh > 1 and dtype == numpy.float64:
        pytest.skip('no pair reaches a threshold above 1 in float64')
    n = 200_000
    first, _ = _random_boxes(rng, n, 'sparse')
    first[n // 2:] += 1e4
    scale = rng.choice([3, 1e-2, 1e-4, 0], (n, 1)) * rng.uniform(0.3, 1.7, (n, 1))
    if dtype == numpy.float64:
        first = first + rng.uniform(-1e-3, 1e-3, first.shape)
        scale[rng.uniform(size=n) < 0.2] = 1e-13
    second = (first + rng.normal(0, 1, (n, 4)) * scale).astype(dtype)
    bbox = numpy.concatenate([first.astype(dtype), second])
    xp = numpy
    area = numpy.prod(numpy.maximum(bbox[:, 2:] - bbox[:, :2], 0), axis=1)
    a, b = numpy.arange(n), numpy.arange(n, 2 * n)
    hit = nms_module._hits(thresh, bbox[a].T, area[a], bbox[b].T, area[b])
    assert hit.sum() > 100
    a, b = a[hit], b[hit]
    for axis in (0, 1):
        low, high, back, forth = nms_module._extents(xp, thresh, bbox, axis)
        early = numpy.where(low[a] <= low[b], a, b)
        late = numpy.where(low[a] <= low[b], b, a)
        # searched forwards from the early box, backwards from the late one
        assert (low[late] <= forth[early]).all() and (low[late] < high[early]).all()
        assert (low[early] >= back[late]).all()
    strip, _ = nms_module._strips(xp, thresh, bbox, 1)
    assert (numpy.abs(strip[a] - strip[b]) <= 1).all()


def test_hand_computed_and_no_score():
    bbox = numpy.array([[0, 0, 10, 10], [0, 0, 10, 9], [0, 0, 10, 4], [50, 50, 60, 60]],
                       numpy.float32)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5), [0, 2, 3])
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.95), [0, 1, 2, 3])
    # IoU of box 0 and 1 is exactly 0.9: >= thresh suppresses
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.9), [0, 2, 3])
    score = numpy.array([0.1, 0.2, 0.3, 0.4], numpy.float32)
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5, score), [3, 2, 1])
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.0, score), [3])


def test_long_suppression_chain():
    """A row of boxes each hitting the next: keep, drop, keep, ... one round each."""
    x = numpy.arange(300, dtype=numpy.float32) * 5
    bbox = numpy.stack([x, 0 * x, x + 10, 0 * x + 10], axis=1)
    kept = non_maximum_suppression(bbox, 0.3)
    numpy.testing.assert_array_equal(kept, numpy.arange(0, 300, 2))


@pytest.mark.parametrize('limit', [0, 1, 3, 1000], ids=['zero', 'one', 'three', 'large'])
def test_limit(rng, limit):
    bbox, score = _random_boxes(rng, 600, 'clustered')
    expected = _greedy_reference(bbox, 0.5, score)[:limit]
    numpy.testing.assert_array_equal(non_maximum_suppression(bbox, 0.5, score, limit), expected)


def test_device(rng, device):
    bbox, score = _random_boxes(rng, 500, 'clustered')
    label = rng.integers(0, 3, 500).astype(numpy.int32)
    on_device = [backend.to_device(array, device) for array in (bbox, score, label)]
    kept = non_maximum_suppression(on_device[0], 0.5, on_device[1])
    assert backend.get_device_from_array(kept) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(kept),
                                     _greedy_reference(bbox, 0.5, score))
    kept = batched_non_maximum_suppression(*on_device, 0.5)
    numpy.testing.assert_array_equal(backend.to_numpy(kept),
                                     _per_class_reference(bbox, score, label, 0.5))


def test_empty_input_and_bad_arguments():
    empty = non_maximum_suppression(numpy.zeros((0, 4), numpy.float32), 0.5)
    assert empty.shape == (0,) and empty.dtype == numpy.int32
    empty = batched_non_maximum_suppression(numpy.zeros((0, 4), numpy.float32),
                                            numpy.zeros(0), numpy.zeros(0, int), 0.5)
    assert empty.shape == (0,) and empty.dtype == numpy.int32
    with pytest.raises(ValueError, match='bbox'):
        non_maximum_suppression(numpy.zeros((3, 3)), 0.5)
    with pytest.raises(ValueError, match='score'):
        non_maximum_suppression(numpy.zeros((3, 4)), 0.5, numpy.zeros(2))
    with pytest.raises(ValueError, match='limit'):
        non_maximum_suppression(numpy.zeros((3, 4)), 0.5, limit=-1)
    with pytest.raises(TypeError, match='thresh'):
        non_maximum_suppression(numpy.zeros((3, 4)), '0.5')
    with pytest.raises(ValueError, match='label'):
        batched_non_maximum_suppression(numpy.zeros((3, 4)), numpy.zeros(3), numpy.zeros(2),
                                        0.5)
    with pytest.raises(ValueError, match='score'):
        batched_non_maximum_suppression(numpy.zeros((3, 4)), None, numpy.zeros(3), 0.5)
