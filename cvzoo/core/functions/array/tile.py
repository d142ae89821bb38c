"""tile: repeat a whole array along each axis."""

import numbers

import numpy

from cvzoo.core.functions.array import broadcast, reshape


def tile(x, reps):
    """Repeat ``x`` ``reps`` times along each axis, as ``numpy.tile``; double backprop.

    It is a composition: x with a size-1 axis before each of its axes is broadcast
    to the repetitions and reshaped, so backward sums the copies.

    Args:
        x (Variable or array): input.
        reps (int or sequence of int): repetitions per axis; when shorter than x.ndim,
            it is padded with 1s in front; when longer, x gets leading axes of size 1.

    Returns:
        Variable: of shape ``(r * n for r, n in zip(reps, shape))`` after the padding.

    >>> import numpy as np
    >>> tile(np.array([1.0, 2.0]), (2, 2)).array
    array([[1., 2., 1., 2.],
           [1., 2., 1., 2.]])
    """
    items = reps if isinstance(reps, (tuple, list)) else (reps,)
    for r in items:
        if isinstance(r, bool) or not isinstance(r, (numbers.Integral, numpy.integer)) or r < 0:
            raise ValueError(f'tile: reps must be non-negative ints, got {reps!r}')
    ndim = max(len(items), x.ndim)
    reps = (1,) * (ndim - len(items)) + tuple(int(r) for r in items)
    shape = (1,) * (ndim - x.ndim) + tuple(x.shape)
    interleaved = tuple(n for s in shape for n in (1, s))
    repeated = tuple(n for r, s in zip(reps, shape) for n in (r, s))
    y = reshape.reshape(x, interleaved)
    y = broadcast.broadcast_to(y, repeated)
    return reshape.reshape(y, tuple(r * s for r, s in zip(reps, shape)))
