"""split_axis: cut an array into pieces along one axis (several outputs)."""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class SplitAxis(function_node.FunctionNode):
    def __init__(self, indices, axis):
        self.indices = indices
        self.axis = axis

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.in_shape = x.shape
        return tuple(xp.split(x, self.indices, axis=self.axis))

    def backward(self, indexes, grad_outputs):
        from cvzoo.core.functions.array import concat  # noqa: PLC0415 - import cycle

        some = next(gy for gy in grad_outputs if gy is not None)
        xp = backend.get_array_module(some)
        bounds = [0] + list(self.indices) + [self.in_shape[self.axis]]
        gys = []
        for gy, start, stop in zip(grad_outputs, bounds[:-1], bounds[1:]):
            if gy is None:
                shape = list(self.in_shape)
                shape[self.axis] = stop - start
                gy = variable_module.Variable(xp.zeros(shape, some.dtype), requires_grad=False)
            gys.append(gy)
        return concat.concat(gys, self.axis),


def _split_points(indices_or_sections, size, what='split_axis'):
    """The split positions as a list of non-decreasing ints in [0, size]."""
    if isinstance(indices_or_sections, (numbers.Integral, numpy.integer)) and not isinstance(
            indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0 or size % sections:
            raise ValueError(
                f'{what}: indices_or_sections={sections} sections do not divide the axis '
                f'of size {size} evenly')
        step = size // sections
        return [step * i for i in range(1, sections)]
    try:
        points = [int(i) for i in indices_or_sections]
    except TypeError:
        raise TypeError(
            f'{what}: indices_or_sections must be an int or a sequence of ints, got '
            f'{indices_or_sections!r}') from None
    points = [i + size if i < 0 else i for i in points]
    if any(not 0 <= i <= size for i in points) or points != sorted(points):
        raise ValueError(
            f'{what}: indices_or_sections must be non-decreasing positions in [0, {size}] '
            f'of the axis, got {list(indices_or_sections)}')
    return points


def split_axis(x, indices_or_sections, axis, force_tuple=True):
    """Split ``x`` into pieces along ``axis``; supports double backprop.

    Outputs that get no gradient count as zeros in backward.

    Args:
        x (Variable or array): input.
        indices_or_sections (int or sequence of int): a number of equal pieces, or the
            positions along ``axis`` where a new piece starts (negative ones count from
            the end), as in ``numpy.split``.
        axis (int): the axis to split.
        force_tuple (bool): when False and there is only one piece, return it alone.

    Returns:
        tuple of Variable: the pieces, views of x.

    >>> import numpy as np
    >>> [y.shape for y in split_axis(np.zeros((2, 5)), [1, 3], axis=1)]
    [(2, 1), (2, 2), (2, 2)]
    """
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, numpy.integer)):
        raise TypeError(f'split_axis: axis must be an int, got {axis!r}')
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f'split_axis: axis {axis} is out of range for x of shape {x.shape}')
    axis = int(axis) % x.ndim
    points = _split_points(indices_or_sections, x.shape[axis])
    ys = SplitAxis(points, axis).apply((x,))
    if not force_tuple and len(ys) == 1:
        return ys[0]
    return ys
