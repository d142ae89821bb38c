"""relu: max(x, 0)."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class ReLU(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        return xp.maximum(x, x.dtype.type(0)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        # NOTE: the mask is a constant: the second derivative of relu is 0 almost
        # everywhere, so gy * mask is right for double backprop too.
        mask = y.xp.asarray(y.array > 0, dtype=y.dtype)
        return grad_outputs[0] * variable_module.Variable(mask, requires_grad=False),


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
