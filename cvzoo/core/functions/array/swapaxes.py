"""swapaxes: exchange two axes."""

import numbers

import numpy

from cvzoo.core.functions.array import transpose


def swapaxes(x, axis1, axis2):
    """Exchange axes ``axis1`` and ``axis2`` of ``x``; supports double backprop.

    Args:
        x (Variable or array): input.
        axis1 (int): one axis (negative counts from the end).
        axis2 (int): the other.

    Returns:
        Variable: a view of x with the two axes exchanged.
    """
    for name, axis in (('axis1', axis1), ('axis2', axis2)):
        if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
            raise TypeError(f'swapaxes: {name} must be an int, got {axis!r}')
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(
                f'swapaxes: {name}={axis} is out of range for x of shape {x.shape}')
    axes = list(range(x.ndim))
    a, b = int(axis1) % x.ndim, int(axis2) % x.ndim
    axes[a], axes[b] = axes[b], axes[a]
    return transpose.transpose(x, axes)
