"""leaky_relu: x if x > 0 else slope * x."""

import numbers

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class LeakyReLU(function_node.FunctionNode):
    def __init__(self, slope):
        self.slope = slope

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0,))
        return xp.where(x > 0, x, x * x.dtype.type(self.slope)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        xp = backend.get_array_module(x.array)
        factor = xp.asarray(xp.where(x.array > 0, 1, self.slope), dtype=x.dtype)
        return grad_outputs[0] * variable_module.Variable(factor, requires_grad=False),


def leaky_relu(x, slope=0.2):
    """Leaky rectified linear unit: ``x`` where ``x > 0``, else ``slope * x``.

    Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.
        slope (float): the slope for negative inputs.

    Returns:
        Variable: same shape and dtype as ``x``.

    Raises:
        TypeError: ``slope`` is not a real number.
    """
    if not isinstance(slope, numbers.Real):
        raise TypeError(f'leaky_relu: slope must be a real number, got {type(slope).__name__}')
    return LeakyReLU(float(slope)).apply((x,))[0]
