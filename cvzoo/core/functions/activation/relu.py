"""relu: max(x, 0)."""

import numpy

from cvzoo.core import backend, config, function_node, parallel
from cvzoo.core import variable as variable_module


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
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        if not config.config.enable_backprop and y.xp is numpy:
            return variable_module.Variable(_masked(gy.array, y.array), requires_grad=False),
        # NOTE: the mask is a constant: the second derivative of relu is 0 almost
        # everywhere, so gy * mask is right for double backprop too.
        mask = y.xp.asarray(y.array > 0, dtype=y.dtype)
        return gy * variable_module.Variable(mask, requires_grad=False),


def _masked(gy, y):
    """``gy * (y > 0)`` in one threaded pass, in y's memory layout."""
    gx = numpy.empty_like(y, dtype=numpy.result_type(gy, y))
    parallel.elementwise(lambda gx, gy, y: numpy.multiply(gy, y > 0, out=gx), gx, gy, y)
    return gx


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
