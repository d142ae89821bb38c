"""The harness must be able to fail: feed it wrong backwards on purpose."""

import numpy
import pytest

import cvzoo.core as C
import cvzoo.core.functions as F
from cvzoo.core import gradient_check
from cvzoo.testing import check_function


class _WrongCube(C.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] ** 3,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 2 * x * x * grad_outputs[0],  # should be 3 x^2


class _OneWrongEntry(C.FunctionNode):
    """Right everywhere but at one element: only the element-wise check can see it."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0].array.copy() * 2
        gy.flat[3] *= 1.5
        return C.Variable(gy),


class _Hoarder(C.FunctionNode):
    def forward(self, inputs):
        self.x = inputs[0]
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,


class _NonDifferentiableBackward(C.FunctionNode):
    """First order right, but the backward is not differentiable (it uses raw arrays)."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] ** 2,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return C.Variable(2 * x.array) * grad_outputs[0],


def test_check_backward_catches_wrong_derivative(rng):
    with pytest.raises(AssertionError, match='directional derivative'):
        gradient_check.check_backward(lambda x: _WrongCube().apply((x,))[0],
                                      rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))


def test_element_wise_check_catches_single_wrong_entry(rng):
    with pytest.raises(AssertionError):
        gradient_check.check_backward(lambda x: _OneWrongEntry().apply((x,))[0],
                                      rng.standard_normal((2, 4)), rng.standard_normal((2, 4)))


def test_retention_check_catches_hoarded_input(rng):
    with pytest.raises(AssertionError, match='retain_inputs'):
        check_function(lambda x: _Hoarder().apply((x,))[0], (rng.standard_normal(4),),
                       lambda x: 2 * x)


def test_double_backward_check_catches_constant_backward(rng):
    with pytest.raises(AssertionError):
        check_function(lambda x: _NonDifferentiableBackward().apply((x,))[0],
                       (rng.standard_normal(4),), lambda x: x ** 2, double_backward=True)


def test_forward_check_catches_wrong_value(rng):
    with pytest.raises(AssertionError, match='output 0'):
        check_function(F.exp, (rng.standard_normal(3),), lambda x: numpy.exp(x) + 1e-2)


def test_numerical_grad_of_square():
    x = numpy.array([1.0, -2.0])
    gx, = gradient_check.numerical_grad(lambda: (x * x,), (x,), (numpy.ones(2),))
    numpy.testing.assert_allclose(gx, [2.0, -4.0], atol=1e-6)


def test_check_backward_on_the_second_gpu_needs_no_device_scope(two_gpus, rng):
    from cvzoo.core import backend
    from cvzoo.core import links as L

    gpu0, gpu1 = two_gpus
    gpu0.use()
    x = backend.to_device(rng.standard_normal((2, 3)), 'cuda:1')
    gy = backend.to_device(rng.standard_normal((2, 3)), 'cuda:1')
    gradient_check.check_backward(F.tanh, x, gy)
    gradient_check.check_double_backward(
        F.tanh, x, gy, backend.to_device(rng.standard_normal((2, 3)), 'cuda:1'))
    link = L.Linear(3, 2).to_device('cuda:1')
    gradient_check.check_backward(
        link, x, backend.to_device(rng.standard_normal((2, 2)), 'cuda:1'),
        params=(link.W, link.b))
    with pytest.raises(AssertionError, match='differ'):  # still able to fail there
        gradient_check.check_backward(lambda v: _WrongCube().apply((v,))[0], x, gy)
    assert backend.get_device('cuda') == gpu0  # the caller's current device is kept
