"""argmax: index of the largest element (no gradient)."""

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module


def check_axis(what, x, axis):
    """Refuse an axis that is not None or an int in range, or an empty reduction."""
    if axis is None:
        if x.size == 0:
            raise ValueError(f'{what}: x is empty (shape {x.shape})')
        return
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise TypeError(f'{what}: axis must be None or an int, got {axis!r}')
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f'{what}: axis {axis} is out of range for an array of {x.ndim} axes')
    if x.shape[axis] == 0:
        raise ValueError(f'{what}: cannot reduce axis {axis} of size 0 (x has shape {x.shape})')


def argmax(x, axis=None):
    """Index of the largest element of ``x`` along ``axis``; not differentiable.

    Ties give the first index, as numpy does.

    Args:
        x (Variable or array): input.
        axis (None or int): axis to search; None searches the flattened array.

    Returns:
        Variable: int32 indexes, x's shape without ``axis`` (0-d for None); it needs no
        gradient.
    """
    check_axis('argmax', x, axis)
    array = variable_module.as_array(x)
    xp = backend.get_array_module(array)
    index = xp.asarray(array.argmax(axis=axis), dtype=numpy.int32)
    return variable_module.Variable(index, requires_grad=False)
