import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core.variable import Variable
from cvzoo.testing import check_function


def _expected(x, t, normalize=True, class_weight=None, ignore_label=-1, reduce='mean',
              cache_score=True):
    """Loop over elements: -w[t] log softmax(x)[t]."""
    x_moved = numpy.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    labels = t.ravel()
    loss = numpy.zeros(labels.shape, dtype=x.dtype)
    for i, (scores, label) in enumerate(zip(x_moved, labels)):
        if label == ignore_label:
            continue
        log_p = scores - scores.max() - numpy.log(numpy.exp(scores - scores.max()).sum())
        weight = 1.0 if class_weight is None else class_weight[label]
        loss[i] = -weight * log_p[label]
    if reduce == 'no':
        return loss.reshape(t.shape)
    count = (labels != ignore_label).sum() if normalize else x.shape[0]
    return numpy.asarray(loss.sum() / max(count, 1), dtype=x.dtype)


CASES = {
    '2d': ((4, 3), {}),
    '4d': ((2, 3, 2, 2), {}),
    'no_normalize': ((4, 3), dict(normalize=False)),
    'no_cache': ((4, 3), dict(cache_score=False)),
    'reduce_no': ((2, 3, 2), dict(reduce='no')),
    'ignore_label_5': ((4, 3), dict(ignore_label=5)),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_softmax_cross_entropy(case, rng):
    shape, kwargs = CASES[case]
    x = rng.normal(size=shape)
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:]).astype(numpy.int32)
    t.ravel()[::3] = kwargs.get('ignore_label', -1)
    check_function(lambda x, t: F.softmax_cross_entropy(x, t, **kwargs), (x, t),
                   lambda x, t: _expected(x, t, **kwargs), double_backward=True)


def test_class_weight(rng):
    x = rng.normal(size=(5, 3))
    t = numpy.array([0, 2, -1, 1, 2], dtype=numpy.int32)
    weight = numpy.array([0.5, 2.0, 3.0])
    check_function(lambda x, t: F.softmax_cross_entropy(x, t, class_weight=weight), (x, t),
                   lambda x, t: _expected(x, t, class_weight=weight.astype(x.dtype)),
                   dtypes=(numpy.float64,))


def test_hand_computed_values():
    # two classes with logits (0, log 3): p = (1/4, 3/4)
    x = numpy.array([[0.0, numpy.log(3.0)]] * 3)
    t = numpy.array([1, 0, -1], dtype=numpy.int32)
    loss = F.softmax_cross_entropy(x, t).array
    assert loss == pytest.approx((-numpy.log(0.75) - numpy.log(0.25)) / 2)
    loss = F.softmax_cross_entropy(x, t, normalize=False).array
    assert loss == pytest.approx((-numpy.log(0.75) - numpy.log(0.25)) / 3)
    weighted = F.softmax_cross_entropy(x, t, class_weight=numpy.array([2.0, 10.0])).array
    assert weighted == pytest.approx((-10 * numpy.log(0.75) - 2 * numpy.log(0.25)) / 2)
    per_element = F.softmax_cross_entropy(x, t, reduce='no').array
    numpy.testing.assert_allclose(per_element, [-numpy.log(0.75), -numpy.log(0.25), 0.0])


def test_all_ignored_gives_zero_loss_and_gradient():
    x = Variable(numpy.ones((2, 3)))
    loss = F.softmax_cross_entropy(x, numpy.array([-1, -1], dtype=numpy.int32))
    loss.backward()
    assert loss.array == 0
    assert not x.grad.any()


def test_large_logits_are_finite():
    x = Variable(numpy.array([[1e3, -1e3, 0.0], [-1e3, 1e3, 5e2]], dtype=numpy.float32))
    t = numpy.array([1, 0], dtype=numpy.int32)
    loss = F.softmax_cross_entropy(x, t)
    loss.backward()
    assert loss.dtype == numpy.float32
    assert loss.array == pytest.approx(2000.0)
    assert numpy.isfinite(x.grad).all()


@pytest.mark.parametrize('x_shape, t_shape', [((4, 3), (4,)), ((2, 3, 5, 6), (2, 5, 6))],
                         ids=['2d', '4d'])
def test_reduce_no_shape(x_shape, t_shape):
    loss = F.softmax_cross_entropy(numpy.zeros(x_shape, dtype=numpy.float32),
                                   numpy.zeros(t_shape, dtype=numpy.int32), reduce='no')
    assert loss.shape == t_shape and loss.dtype == numpy.float32


@pytest.mark.parametrize('t, kwargs, error, match', [
    (numpy.zeros(4, numpy.int32), dict(reduce='sum'), ValueError, 'reduce'),
    (numpy.zeros(4), {}, TypeError, 't must be an integer'),
    (numpy.zeros(3, numpy.int32), {}, ValueError, 'shape'),
    (numpy.array([0, 1, 3, 0], numpy.int32), {}, ValueError, 'labels'),
    (numpy.zeros(4, numpy.int32), dict(class_weight=numpy.ones(2)), ValueError, 'class_weight'),
], ids=['reduce', 'float_t', 'shape', 'label_range', 'class_weight'])
def test_bad_arguments(t, kwargs, error, match):
    with pytest.raises(error, match=match):
        F.softmax_cross_entropy(numpy.zeros((4, 3)), t, **kwargs)
