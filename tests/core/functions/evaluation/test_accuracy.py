import numpy
import pytest

import cvzoo.core.functions as F


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
