"""select_item: pick one element per row, x[i, t[i]]."""

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast, reshape


class SelectItem(function_node.FunctionNode):
    def forward(self, inputs):
        x, t = inputs
        xp = backend.get_array_module(x, t)
        self.retain_inputs((1,))
        self.in_shape = x.shape
        if xp is numpy:  # t was range-checked on the host
            return xp.take_along_axis(x, t[:, None].astype(xp.intp), axis=1)[:, 0],
        # on a GPU t is not read on the host (a sync); an entry out of range gives NaN
        out_of_range = (t < 0) | (t >= x.shape[1])
        safe_t = xp.where(out_of_range, 0, t).astype(xp.intp)
        y = xp.take_along_axis(x, safe_t[:, None], axis=1)[:, 0]
        return xp.where(out_of_range, xp.nan, y).astype(x.dtype, copy=False),

    def backward(self, indexes, grad_outputs):
        t, = self.get_retained_inputs()
        gy, = grad_outputs
        xp = backend.get_array_module(t)
        chosen = xp.arange(self.in_shape[1]) == t.array[:, None]
        # NOTE: the mask is a constant of the graph, so the second derivative is 0.
        mask = variable_module.Variable(chosen.astype(gy.dtype), requires_grad=False)
        gy = reshape.reshape(gy, (self.in_shape[0], 1))
        return broadcast.broadcast_to(gy, self.in_shape) * mask, None


def select_item(x, t):
    """Pick ``x[i, t[i]]`` for every row i; supports double backprop.

    Args:
        x (Variable or array): (B, K) float.
        t (Variable or array): (B,) int, each in [0, K).

    Returns:
        Variable: (B,) of x's dtype.

    Raises:
        ValueError: the shapes do not fit or an entry of t is out of range.
        TypeError: t is not an int array.

    >>> import numpy as np
    >>> select_item(np.arange(6.0).reshape(2, 3), np.array([2, 0])).array
    array([2., 3.])
    """
    t_array = variable_module.as_array(t)
    if x.ndim != 2:
        raise ValueError(f'select_item: x must be 2-D (B, K), got shape {x.shape}')
    if t.dtype.kind not in ('i', 'u'):
        raise TypeError(f'select_item: t must be an int array, got dtype {t.dtype}')
    if t.shape != x.shape[:1]:
        raise ValueError(
            f'select_item: t must have shape {x.shape[:1]} to match x {x.shape}, got {t.shape}')
    on_host = backend.get_array_module(t_array) is numpy
    if t.size and on_host and ((t_array < 0).any() or (t_array >= x.shape[1]).any()):
        raise ValueError(f'select_item: entries of t must be in [0, {x.shape[1]}), '
                         f'got values from {int(t_array.min())} to {int(t_array.max())}')
    return SelectItem().apply((x, t))[0]
