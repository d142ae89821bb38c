import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors


def _expected(y, t, ignore_label=None):
    pred = y.argmax(axis=1).ravel()
    labels = t.ravel()
    hits = count = 0
    for p, label in zip(pred, labels):
        if label == ignore_label:
            continue
        count += 1
        hits += p == label
    return hits / count if count else 0.0


@pytest.mark.parametrize('shape, ignore_label', [
    ((6, 3), None), ((6, 3), -1), ((2, 4, 3, 3), -1), ((2, 4, 3), None),
], ids=['2d', '2d_ignore', '4d_ignore', '3d'])
def test_accuracy(shape, ignore_label, rng):
    y = rng.normal(size=shape).astype(numpy.float32)
    t = rng.integers(-1 if ignore_label is not None else 0, shape[1],
                     (shape[0],) + shape[2:]).astype(numpy.int32)
    result = F.accuracy(y, t, ignore_label=ignore_label)
    assert result.shape == () and result.dtype == numpy.float32
    assert not result.requires_grad and result.creator is None
    assert result.array == pytest.approx(_expected(y, t, ignore_label))


def test_hand_computed():
    y = numpy.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    t = numpy.array([1, 1, -1, 0], dtype=numpy.int32)
    assert F.accuracy(y, t, ignore_label=-1).array == pytest.approx(2 / 3)
    assert F.accuracy(y, numpy.array([-1] * 4, numpy.int32), ignore_label=-1).array == 0


def test_bad_arguments():
    with pytest.raises(TypeError, match='integer'):
        F.accuracy(numpy.zeros((2, 3)), numpy.zeros(2))
    with pytest.raises(ValueError, match='shape'):
        F.accuracy(numpy.zeros((2, 3)), numpy.zeros(3, numpy.int32))


def _expected_top_k(y, t, k, ignore_label=None):
    """Sort-based top-k (stable: on ties the smaller class id comes first)."""
    order = numpy.argsort(-numpy.moveaxis(y, 1, -1), axis=-1, kind='stable')[..., :k]
    hit = (order == t[..., None]).any(axis=-1)
    valid = numpy.ones(t.shape, bool) if ignore_label is None else t != ignore_label
    return hit[valid].mean() if valid.any() else 0.0


@pytest.mark.parametrize('shape, ignore_label', [((7, 5), None), ((3, 4, 2, 2), -1)])
@pytest.mark.parametrize('k', [1, 2, 4])
def test_top_k_matches_a_sort(shape, ignore_label, k, rng):
    # scores drawn from few values, so that ties are common
    y = rng.integers(0, 3, shape).astype(numpy.float32)
    t = rng.integers(-1 if ignore_label is not None else 0, shape[1],
                     (shape[0],) + shape[2:]).astype(numpy.int32)
    result = F.accuracy(y, t, ignore_label=ignore_label, k=k)
    assert result.array == pytest.approx(_expected_top_k(y, t, k, ignore_label))


def test_top_k_ties_go_to_the_smaller_class_id():
    y = numpy.array([[0.5, 0.5, 0.5], [0.2, 0.5, 0.5]], numpy.float32)
    assert F.accuracy(y, numpy.array([0, 1], numpy.int32)).array == 1
    assert F.accuracy(y, numpy.array([1, 2], numpy.int32)).array == 0
    assert F.accuracy(y, numpy.array([1, 2], numpy.int32), k=2).array == 1
    assert F.accuracy(y, numpy.array([2, 0], numpy.int32), k=2).array == 0


def test_a_nan_true_score_is_never_a_hit():
    y = numpy.array([[numpy.nan, 0.1], [numpy.nan, numpy.nan], [0.3, numpy.nan]], numpy.float32)
    result = F.accuracy(y, numpy.array([0, 1, 0], numpy.int32), k=2)
    assert result.array == pytest.approx(1 / 3)  # only the third row's 0.3 counts


@pytest.mark.parametrize('k', [0, -1, 1.5, True, '2'])
def test_k_must_be_a_positive_int(k):
    with pytest.raises(errors.UsageError, match=r'^k: expected a positive int'):
        F.accuracy(numpy.zeros((2, 3)), numpy.zeros(2, numpy.int32), k=k)


def test_top_k_on_a_gpu_equals_the_host(gpu_pair, rng):
    from cvzoo.core import backend

    y = rng.integers(0, 3, (6, 4, 3)).astype(numpy.float32)
    t = rng.integers(-1, 4, (6, 3)).astype(numpy.int32)
    device = gpu_pair[1]
    with device:
        result = F.accuracy(device.send(y), device.send(t), ignore_label=-1, k=2)
    assert backend.to_numpy(result.array) == pytest.approx(_expected_top_k(y, t, 2, -1))
