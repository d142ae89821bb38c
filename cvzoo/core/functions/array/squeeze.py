"""squeeze: remove axes of size 1."""

import numbers

import numpy

from cvzoo.core.functions.array import reshape


def squeeze(x, axis=None):
    """Remove axes of size 1 from ``x``; supports double backprop.

    Args:
        x (Variable or array): input.
        axis (None, int or tuple of int): the axes to remove, each of size 1; None
            removes every axis of size 1.

    Returns:
        Variable: of x's data with fewer axes.

    Raises:
        ValueError: an axis is out of range or not of size 1.
    """
    if axis is None:
        axes = [i for i, n in enumerate(x.shape) if n == 1]
    else:
        items = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = []
        for a in items:
            if isinstance(a, bool) or not isinstance(a, (numbers.Integral, numpy.integer)):
                raise TypeError(f'squeeze: axis must be None, an int or ints, got {axis!r}')
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f'squeeze: axis {a} is out of range for x of shape {x.shape}')
            if x.shape[a] != 1:
                raise ValueError(
                    f'squeeze: axis {a} of x (shape {x.shape}) has size {x.shape[a]}, not 1')
            axes.append(int(a) % x.ndim)
    shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return reshape.reshape(x, shape)
