"""clip: limit values to [x_min, x_max]."""

import numbers

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class Clip(function_node.FunctionNode):
    def __init__(self, x_min, x_max):
        self.x_min = x_min
        self.x_max = x_max

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0,))
        lower = None if self.x_min is None else x.dtype.type(self.x_min)
        upper = None if self.x_max is None else x.dtype.type(self.x_max)
        return xp.clip(x, lower, upper),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        xp = backend.get_array_module(x)
        inside = xp.ones(x.shape, dtype=bool)
        if self.x_min is not None:
            inside &= x.array >= self.x_min
        if self.x_max is not None:
            inside &= x.array <= self.x_max
        # NOTE: the mask is a constant of the graph, so the second derivative is 0.
        mask = variable_module.Variable(inside.astype(x.dtype), requires_grad=False)
        return grad_outputs[0] * mask,


def clip(x, x_min, x_max):
    """Clip the elements of ``x`` to ``[x_min, x_max]``; supports double backprop.

    The gradient passes where ``x_min <= x <= x_max`` and is 0 elsewhere.

    Args:
        x (Variable or array): float.
        x_min (float or None): lower bound; None for none.
        x_max (float or None): upper bound; None for none.

    Returns:
        Variable: of x's shape and dtype.

    >>> import numpy as np
    >>> clip(np.array([-2.0, 0.5, 3.0]), -1.0, 1.0).array
    array([-1. ,  0.5,  1. ])
    """
    for name, bound in (('x_min', x_min), ('x_max', x_max)):
        if bound is not None and (
                not isinstance(bound, numbers.Real) or isinstance(bound, bool)):
            raise TypeError(f'clip: {name} must be a real number or None, got {bound!r}')
    if x_min is None and x_max is None:
        raise ValueError('clip: x_min and x_max are both None; give at least one bound')
    if x_min is not None and x_max is not None and x_min > x_max:
        raise ValueError(f'clip: x_min must be <= x_max, got x_min={x_min}, x_max={x_max}')
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'clip: x must be a float array, got dtype {x.dtype}')
    return Clip(x_min, x_max).apply((x,))[0]
