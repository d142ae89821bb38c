"""stack: join arrays along a new axis."""

import numbers

import numpy

from cvzoo.core.functions.array import concat, expand_dims


def stack(xs, axis=0):
    """Join arrays of the same shape along a new ``axis``; supports double backprop.

    Args:
        xs (sequence of Variable or array): at least one; same shape and dtype.
        axis (int): position of the new axis in the result, in [-ndim - 1, ndim].

    Returns:
        Variable: of shape ``xs[0].shape`` with ``len(xs)`` inserted at ``axis``.

    >>> import numpy as np
    >>> stack([np.zeros((2, 3)), np.ones((2, 3))], axis=1).shape
    (2, 2, 3)
    """
    xs = list(xs)
    if not xs:
        raise ValueError('stack: xs must hold at least one array, got none')
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
        raise TypeError(f'stack: axis must be an int, got {axis!r}')
    ndim = xs[0].ndim
    if not -ndim - 1 <= axis <= ndim:
        raise ValueError(
            f'stack: axis must be in [{-ndim - 1}, {ndim}] for xs[0] of shape {xs[0].shape}, '
            f'got {axis}')
    for i, x in enumerate(xs[1:], 1):
        if x.shape != xs[0].shape:
            raise ValueError(
                f'stack: xs must share a shape, xs[0] has shape {xs[0].shape} and xs[{i}] '
                f'has shape {x.shape}')
    axis = int(axis) % (ndim + 1)
    return concat.concat([expand_dims.expand_dims(x, axis) for x in xs], axis)
