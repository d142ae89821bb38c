"""relu: max(x, 0)."""

import numpy

from cvzoo.core import backend, function_node, parallel
from cvzoo.core.config import config

# gy * (y > 0) in one kernel launch instead of two on a GPU (float32 and float64)
_masked_kernel = backend.elementwise_kernel(
    'T gy, T y', 'T gx', 'gx = gy * (T)(y > (T)0)', 'cvzoo_relu_grad',
    lambda gy, y: gy * (y > 0).astype(y.dtype))


class ReLU(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        zero = x.dtype.type(0)
        if xp is not numpy:
            return xp.maximum(x, zero),
        y = numpy.empty_like(x)  # x's layout (a convolution's output is channel-major)
        parallel.elementwise(lambda y, x: numpy.maximum(x, zero, out=y), y, x)
        return y,

    def backward(self, indexes, grad_outputs):
        return _relu_backward(self, grad_outputs)


def _relu_backward(node, grad_outputs):
    """``gy * (y > 0)`` for a node whose output 0 is a relu's output y."""
    if not config.enable_backprop:  # first order: the array, without a node of its own
        node._check_not_released()
        return _ReLUGrad(node._retained_outputs[0]).forward((grad_outputs[0].array,))
    y, = node.get_retained_outputs()
    return _ReLUGrad(y.array).apply(grad_outputs)


class AddReLU(function_node.FunctionNode):
    """``relu(a + b)`` of two arrays of one shape and dtype (a residual block's end).

    One node instead of an Add and a ReLU, with the same arithmetic: the sum, then
    ``max(sum, 0)`` written into it; both inputs get relu's gradient.
    """

    def forward(self, inputs):
        a, b = inputs
        self.retain_outputs((0,))
        zero = a.dtype.type(0)
        y = parallel.add(a, b)
        if backend.get_array_module(y) is numpy:
            parallel.elementwise(lambda y: numpy.maximum(y, zero, out=y), y)
        else:
            y = backend.get_array_module(y).maximum(y, zero, out=y)
        return y,

    def backward(self, indexes, grad_outputs):
        gx, = _relu_backward(self, grad_outputs)
        return (gx,) * len(indexes)


class _ReLUGrad(function_node.FunctionNode):
    """``gx = gy * (y > 0)``, with relu's output ``y`` held as a constant mask.

    It is linear in gy with the same mask, so it is its own backward: one node serves
    the first derivative and every higher one (relu's second derivative is 0 almost
    everywhere), as Chainer's ReLUGrad2.
    """

    def __init__(self, y):
        self.y = y

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        if xp is not numpy:
            if gy.dtype == self.y.dtype and gy.dtype.kind == 'f' and gy.dtype.itemsize >= 4:
                return _masked_kernel(gy, self.y),
            dtype = numpy.result_type(gy.dtype, self.y.dtype)
            return (gy * (self.y > 0)).astype(dtype, copy=False),
        return _masked(gy, self.y),

    def backward(self, indexes, grad_outputs):
        return _ReLUGrad(self.y).apply(grad_outputs)


def _masked(gy, y):
    """``gy * (y > 0)`` in one threaded pass, in y's memory layout."""
    gx = numpy.empty_like(y, dtype=numpy.result_type(gy, y))
    parallel.elementwise(lambda gx, gy, y: numpy.multiply(gy, y > 0, out=gx), gx, gy, y)
    return gx


def add_relu(a, b):
    """``relu(a + b)`` as one function node, for ``a`` and ``b`` of one shape and dtype.

    The same values and gradients as ``F.relu(a + b)``, with one node less in the graph
    (used at the end of each ResNet bottleneck).

    Raises:
        ValueError: shapes or dtypes differ (use ``F.relu(a + b)``, which broadcasts and
            promotes).
    """
    a_array, b_array = getattr(a, 'array', a), getattr(b, 'array', b)
    if a_array.shape != b_array.shape or a_array.dtype != b_array.dtype:
        raise ValueError(f'add_relu: a and b must share shape and dtype, got {a_array.shape} '
                         f'{a_array.dtype} and {b_array.shape} {b_array.dtype}')
    return AddReLU().apply((a, b))[0]


def relu(x):
    """Rectified linear unit, ``max(x, 0)`` elementwise.

    The gradient at 0 is taken as 0. Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``.

    >>> import numpy as np
    >>> relu(np.array([-1.0, 2.0])).array
    array([0., 2.])
    """
    return ReLU().apply((x,))[0]
