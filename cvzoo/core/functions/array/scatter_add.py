"""scatter_add: add values into an array at indexed positions."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast, get_item


class ScatterAdd(function_node.FunctionNode):
    def __init__(self, slices):
        self.slices = slices

    def forward(self, inputs):
        a, b = inputs
        self.b_shape = b.shape
        y = a.copy()
        backend.add_at(y, self.slices, b)
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        result = []
        if 0 in indexes:
            result.append(gy)
        if 1 in indexes:
            gb = get_item.get_item(gy, self.slices)
            result.append(gb if gb.shape == self.b_shape else broadcast.sum_to(gb, self.b_shape))
        return tuple(result)


def scatter_add(a, slices, b):
    """Return a copy of ``a`` with ``b`` added at ``a[slices]``; supports double backprop.

    Repeated indexes accumulate (``numpy.add.at``), so ``b`` may hold several values
    for one element of ``a``.

    Args:
        a (Variable or array): the base array.
        slices: an index as ``get_item`` takes it.
        b (Variable or array): of a's dtype; broadcastable to the shape of ``a[slices]``.

    Returns:
        Variable: of a's shape and dtype.

    >>> import numpy as np
    >>> scatter_add(np.zeros(3), np.array([0, 2, 2]), np.ones(3)).array
    array([1., 0., 2.])
    """
    if a.dtype != b.dtype:
        raise TypeError(f'scatter_add: a and b must share a dtype, got {a.dtype} and {b.dtype}')
    slices, _ = get_item.normalize_slices(a, slices, 'scatter_add')
    target_shape = variable_module.as_array(a)[slices].shape
    broadcast_ok = len(b.shape) <= len(target_shape) and all(
        m == n or m == 1 for m, n in zip(b.shape[::-1], target_shape[::-1]))
    if not broadcast_ok:
        raise ValueError(
            f'scatter_add: b of shape {b.shape} does not broadcast to a[slices] of shape '
            f'{target_shape}')
    return ScatterAdd(slices).apply((a, b))[0]
