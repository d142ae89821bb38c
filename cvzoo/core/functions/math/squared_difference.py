"""squared_difference: ``(x - y) ** 2``, the worked example of a function with own kernels.

Forward and backward each run one elementwise kernel made by
``backend.elementwise_kernel``: CuPy's ``ElementwiseKernel`` on a GPU (one pass over
memory instead of a subtraction and a square), its NumPy twin on the CPU. The second
order is written with differentiable functions, so double backprop works too. Copy this
file to write your own fused GPU function (docs/gpu.md, "Your own kernel").
"""

from cvzoo.core import backend, function_node

_forward_kernel = backend.elementwise_kernel(
    'T x, T y', 'T z',
    'T d = x - y; z = d * d',
    'cvzoo_squared_difference_fwd',
    lambda x, y: (x - y) ** 2)

_backward_kernel = backend.elementwise_kernel(
    'T x, T y, T gz', 'T gx',
    'gx = 2 * (x - y) * gz',
    'cvzoo_squared_difference_bwd',
    lambda x, y, gz: 2 * (x - y) * gz)


class SquaredDifference(function_node.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, y = inputs
        return _forward_kernel(x, y),

    def backward(self, indexes, grad_outputs):
        x, y = self.get_retained_inputs()
        gz, = grad_outputs
        gx, = _SquaredDifferenceGrad().apply((x, y, gz))
        return gx, -gx


class _SquaredDifferenceGrad(function_node.FunctionNode):
    """gx = 2 (x - y) gz, by the backward kernel; its own gradient by plain functions."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, y, gz = inputs
        return _backward_kernel(x, y, gz),

    def backward(self, indexes, grad_outputs):
        x, y, gz = self.get_retained_inputs()
        g, = grad_outputs
        twice_g = 2 * g
        return twice_g * gz, -(twice_g * gz), twice_g * (x - y)


def squared_difference(x, y):
    """Elementwise ``(x - y) ** 2``, computed by one fused kernel on a GPU.

    Args:
        x, y (Variable or array): float arrays of the same shape and device.

    Returns:
        Variable: the squared difference; supports double backprop.

    >>> import numpy as np
    >>> squared_difference(np.array([3.0, 1.0]), np.array([1.0, 1.0])).array
    array([4., 0.])
    """
    if x.shape != y.shape:
        raise ValueError(f'squared_difference: x and y must have one shape, got {x.shape} '
                         f'and {y.shape}')
    return SquaredDifference().apply((x, y))[0]
