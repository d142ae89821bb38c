"""elu: x if x > 0 else alpha * (exp(x) - 1)."""

import numbers

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class ELU(function_node.FunctionNode):
    def __init__(self, alpha):
        self.alpha = alpha

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        negative = xp.expm1(xp.minimum(x, x.dtype.type(0))) * x.dtype.type(self.alpha)
        return xp.where(x > 0, x, negative),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        positive = x.xp.asarray(x.array > 0, dtype=x.dtype)
        # NOTE: for x <= 0, d/dx alpha * (exp(x) - 1) = y + alpha. Writing it through y
        # keeps double backprop right without evaluating exp on large positive x.
        positive_var = variable_module.Variable(positive, requires_grad=False)
        negative_var = variable_module.Variable(x.xp.asarray(1 - positive), requires_grad=False)
        return grad_outputs[0] * (positive_var + negative_var * (y + self.alpha)),


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.
        alpha (float): the scale of the negative part.

    Returns:
        Variable: same shape and dtype as ``x``.

    Raises:
        TypeError: ``alpha`` is not a real number.
    """
    if not isinstance(alpha, numbers.Real):
        raise TypeError(f'elu: alpha must be a real number, got {type(alpha).__name__}')
    return ELU(float(alpha)).apply((x,))[0]
