import gc
import weakref

import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F


def _var(rng, *shape):
    return C.Variable(rng.standard_normal(shape).astype(numpy.float32))


def test_backward_accumulates_into_leaf_grads(rng):
    x = _var(rng, 3)
    F.sum(x * x).backward()
    F.sum(x * x).backward()
    numpy.testing.assert_allclose(x.grad, 4 * x.array, rtol=1e-6)


def test_cleargrad_resets(rng):
    x = _var(rng, 3)
    F.sum(x * 3).backward()
    x.cleargrad()
    assert x.grad is None


def test_intermediate_grad_kept_only_when_asked(rng):
    x = _var(rng, 3)
    h = x * 2
    F.sum(h * h).backward()
    assert h.grad is None
    h = x * 2
    F.sum(h * h).backward(retain_grad=True)
    numpy.testing.assert_allclose(h.grad, 2 * h.array, rtol=1e-6)


def test_python_control_flow_builds_graph(rng):
    x = _var(rng, 4)
    y = x
    for i in range(3):
        y = y * x if i % 2 == 0 else y + x
    F.sum(y).backward()
    # y = x^3 + x^2
    numpy.testing.assert_allclose(x.grad, 3 * x.array ** 2 + 2 * x.array, rtol=1e-5)


def test_diamond_graph_adds_both_paths(rng):
    x = _var(rng, 5)
    a = F.exp(x)
    y = F.sum(a * a + a)
    y.backward()
    e = numpy.exp(x.array)
    numpy.testing.assert_allclose(x.grad, 2 * e * e + e, rtol=1e-5)


def test_non_scalar_backward_needs_grad(rng):
    x = _var(rng, 3)
    y = x * 2
    with pytest.raises(ValueError, match='needs its gradient'):
        y.backward()
    y.grad = numpy.ones(3, dtype=numpy.float32)
    y.backward()
    numpy.testing.assert_allclose(x.grad, [2, 2, 2])


def test_grad_returns_without_touching_dot_grad(rng):
    x = _var(rng, 3)
    y = F.sum(x ** 3)
    gx, = C.grad([y], [x])
    numpy.testing.assert_allclose(gx.array, 3 * x.array ** 2, rtol=1e-5)
    assert x.grad is None


def test_grad_of_intermediate_variable(rng):
    x = _var(rng, 3)
    h = F.exp(x)
    y = F.sum(h * 2)
    gh, gx = C.grad([y], [h, x])
    numpy.testing.assert_allclose(gh.array, [2, 2, 2])
    numpy.testing.assert_allclose(gx.array, 2 * numpy.exp(x.array), rtol=1e-5)


def test_double_backprop_gives_second_derivative(rng):
    x = _var(rng, 3)
    gx, = C.grad([F.sum(x ** 3)], [x], enable_double_backprop=True)
    assert gx.creator is not None
    F.sum(gx).backward()
    numpy.testing.assert_allclose(x.grad, 6 * x.array, rtol=1e-5)


def test_grad_without_double_backprop_records_nothing(rng):
    x = _var(rng, 3)
    gx, = C.grad([F.sum(x ** 3)], [x])
    assert gx.creator is None


def test_second_backward_after_release_is_an_error(rng):
    x = _var(rng, 3)
    y = F.sum(F.exp(x))
    y.backward()
    with pytest.raises(RuntimeError, match='retain_graph=True'):
        y.backward()


def test_retain_graph_allows_second_backward(rng):
    x = _var(rng, 3)
    y = F.sum(F.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    numpy.testing.assert_allclose(x.grad, 2 * numpy.exp(x.array), rtol=1e-5)


def test_dropped_array_is_freed_when_not_retained(rng):
    x = _var(rng, 1000)
    h = x + 1.0  # AddConstant retains nothing
    ref = weakref.ref(h.array)
    y = F.exp(h)  # Exp retains its output, not its input
    del h
    gc.collect()
    assert ref() is None
    F.sum(y).backward()
    numpy.testing.assert_allclose(x.grad, y.array, rtol=1e-6)


def test_retained_input_survives_until_backward_releases_it(rng):
    x = _var(rng, 1000)
    h = x + 1.0
    ref = weakref.ref(h.array)
    y = F.log(h * h)  # Mul retains h
    del h
    gc.collect()
    assert ref() is not None
    F.sum(y).backward()
    gc.collect()
    assert ref() is None


def test_backward_releases_function_nodes(rng):
    x = _var(rng, 10)
    h = F.exp(x)
    creator_ref = weakref.ref(h.creator)
    y = F.sum(h)
    del h
    y.backward()
    gc.collect()
    assert y.creator.inputs is None  # released
    assert creator_ref() is None or creator_ref()._released


def test_no_backprop_mode_records_no_graph(rng):
    x = _var(rng, 3)
    with C.no_backprop_mode():
        y = F.exp(x)
    assert y.creator is None
    assert not y.requires_grad


def test_requires_grad_false_input_records_no_graph(rng):
    x = C.Variable(numpy.ones(3, numpy.float32), requires_grad=False)
    assert F.exp(x).creator is None


def test_unchain_backward_cuts_graph(rng):
    x = _var(rng, 3)
    h = F.exp(x)
    y = F.sum(h * 2)
    y.unchain_backward()
    assert y.creator is None and h.creator is None
    F.sum(h * 3).backward()
    assert x.grad is None


def test_unchain_makes_leaf(rng):
    x = _var(rng, 3)
    h = F.exp(x)
    h.unchain()
    F.sum(h * 2).backward()
    assert x.grad is None
    assert h.grad is not None


def test_wrong_gradient_shape_from_backward_is_reported(rng):
    class Bad(C.FunctionNode):
        def forward(self, inputs):
            return inputs[0] * 2,

        def backward(self, indexes, grad_outputs):
            return F.sum(grad_outputs[0], axis=0),

    x = _var(rng, 2, 3)
    y, = Bad().apply((x,))
    with pytest.raises(ValueError, match='Bad.backward: gradient of shape'):
        F.sum(y).backward()
