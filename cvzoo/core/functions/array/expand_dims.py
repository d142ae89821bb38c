"""expand_dims: insert an axis of size 1."""

import numbers

import numpy

from cvzoo.core.functions.array import reshape


def expand_dims(x, axis):
    """Insert an axis of size 1 at position ``axis``; supports double backprop.

    Args:
        x (Variable or array): input.
        axis (int): where the new axis goes in the result, in [-x.ndim - 1, x.ndim].

    Returns:
        Variable: of x's data with one more axis.

    >>> import numpy as np
    >>> expand_dims(np.zeros((2, 3)), -1).shape
    (2, 3, 1)
    """
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
        raise TypeError(f'expand_dims: axis must be an int, got {axis!r}')
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(
            f'expand_dims: axis must be in [{-x.ndim - 1}, {x.ndim}] for x of shape '
            f'{x.shape}, got {axis}')
    axis = int(axis) % (x.ndim + 1)
    return reshape.reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])
