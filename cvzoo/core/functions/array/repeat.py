"""repeat: repeat each element, as numpy.repeat."""

import numbers

import numpy

from cvzoo.core.functions.array import get_item, reshape


def _check_repeats(repeats, size):
    items = [repeats] if isinstance(repeats, (numbers.Integral, numpy.integer)) else repeats
    try:
        items = [int(r) for r in items]
    except TypeError:
        raise TypeError(
            f'repeat: repeats must be an int or a sequence of ints, got {repeats!r}') from None
    if any(r < 0 for r in items) or len(items) not in (1, size):
        raise ValueError(
            f'repeat: repeats must be non-negative and one int or {size} of them, got '
            f'{repeats!r}')
    return items


def repeat(x, repeats, axis=None):
    """Repeat each element of ``x`` along ``axis``; supports double backprop.

    A composition: it gathers with an index array, so backward adds up the copies.

    Args:
        x (Variable or array): input.
        repeats (int or sequence of int): how often each element is repeated; a
            sequence gives one count per element along ``axis``.
        axis (int or None): the axis; None flattens x first.

    Returns:
        Variable: x with the elements repeated.

    >>> import numpy as np
    >>> repeat(np.array([1.0, 2.0]), [1, 2]).array
    array([1., 2., 2.])
    """
    if axis is None:
        x = reshape.reshape(x, (x.size,))
        axis = 0
    elif isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
        raise TypeError(f'repeat: axis must be None or an int, got {axis!r}')
    elif not -x.ndim <= axis < x.ndim:
        raise ValueError(f'repeat: axis {axis} is out of range for x of shape {x.shape}')
    axis = int(axis) % x.ndim
    counts = _check_repeats(repeats, x.shape[axis])
    index = numpy.repeat(numpy.arange(x.shape[axis]), counts)
    return get_item.get_item(x, (slice(None),) * axis + (index,))
