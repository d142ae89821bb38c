"""rollaxis: move one axis to another position."""

import numbers

import numpy

from cvzoo.core.functions.array import transpose


def rollaxis(x, axis, start=0):
    """Move ``axis`` of ``x`` so it comes before ``start``, as ``numpy.rollaxis``.

    Supports double backprop.

    Args:
        x (Variable or array): input.
        axis (int): the axis to move, in [-x.ndim, x.ndim).
        start (int): the axis it is placed before, in [-x.ndim, x.ndim].

    Returns:
        Variable: a view of x with the axes reordered.
    """
    for name, value, upper in (('axis', axis, x.ndim), ('start', start, x.ndim + 1)):
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, numpy.integer)):
            raise TypeError(f'rollaxis: {name} must be an int, got {value!r}')
        if not -x.ndim <= value < upper:
            raise ValueError(
                f'rollaxis: {name}={value} is out of range for x of shape {x.shape}')
    axis = int(axis) % x.ndim
    start = int(start) + x.ndim if start < 0 else int(start)
    axes = [i for i in range(x.ndim) if i != axis]
    axes.insert(start - 1 if start > axis else start, axis)
    return transpose.transpose(x, axes)
