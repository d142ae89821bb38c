"""pad: surround an array with a constant."""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core.functions.array import get_item


class Pad(function_node.FunctionNode):
    def __init__(self, pad_width, constant_values):
        self.pad_width = pad_width
        self.constant_values = constant_values

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.in_shape = x.shape
        return xp.pad(x, self.pad_width, mode='constant',
                      constant_values=self.constant_values),

    def backward(self, indexes, grad_outputs):
        slices = tuple(slice(before, before + n)
                       for (before, _), n in zip(self.pad_width, self.in_shape))
        return get_item.get_item(grad_outputs[0], slices),


def _normalize_pad_width(pad_width, ndim):
    """pad_width as numpy takes it, turned into ((before, after),) * ndim of ints."""
    widths = numpy.asarray(pad_width)
    if widths.dtype.kind not in ('i', 'u') or widths.ndim > 2:
        raise TypeError(
            'pad: pad_width must be an int, a (before, after) pair or one pair per axis, '
            f'got {pad_width!r}')
    try:
        widths = numpy.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(
            f'pad: pad_width {pad_width!r} does not fit an array of {ndim} axes') from None
    if (widths < 0).any():
        raise ValueError(f'pad: pad_width must not be negative, got {pad_width!r}')
    return tuple((int(before), int(after)) for before, after in widths)


def pad(x, pad_width, mode='constant', constant_values=0):
    """Pad ``x`` with a constant on each side of each axis; supports double backprop.

    Args:
        x (Variable or array): input.
        pad_width (int or sequence): as in ``numpy.pad``: one int for everything, a
            ``(before, after)`` pair for every axis, or one pair per axis.
        mode (str): only ``'constant'``.
        constant_values (float): the value of the padding.

    Returns:
        Variable: x with the padding, of x's dtype.

    >>> import numpy as np
    >>> pad(np.ones((1, 2)), ((0, 0), (1, 2))).array
    array([[0., 1., 1., 0., 0.]])
    """
    if mode != 'constant':
        raise ValueError(f"pad: mode must be 'constant' (the only one supported), got {mode!r}")
    if isinstance(constant_values, bool) or not isinstance(constant_values, numbers.Real):
        raise TypeError(f'pad: constant_values must be a number, got {constant_values!r}')
    widths = _normalize_pad_width(pad_width, x.ndim)
    return Pad(widths, constant_values).apply((x,))[0]
