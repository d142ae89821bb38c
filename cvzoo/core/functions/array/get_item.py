"""get_item: numpy indexing, basic and advanced; also ``Variable.__getitem__``."""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module

_BASIC_TYPES = (slice, type(None), type(Ellipsis))


def _is_integer(item):
    return isinstance(item, (numbers.Integral, numpy.integer)) and not isinstance(item, bool)


class GetItem(function_node.FunctionNode):
    def __init__(self, slices, basic):
        self.slices = slices
        self.basic = basic

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        return x[self.slices],

    def backward(self, indexes, grad_outputs):
        grad = _GetItemGrad(self.slices, self.basic, self.in_shape)
        return grad.apply(grad_outputs)


class _GetItemGrad(function_node.FunctionNode):
    """Scatter gy into zeros of the input's shape; repeated indexes accumulate."""

    def __init__(self, slices, basic, in_shape):
        self.slices = slices
        self.basic = basic
        self.in_shape = in_shape

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        gx = xp.zeros(self.in_shape, dtype=gy.dtype)
        if self.basic:
            gx[self.slices] = gy  # basic indexing never selects an element twice
        else:
            xp.add.at(gx, self.slices, gy)
        return gx,

    def backward(self, indexes, grad_outputs):
        return GetItem(self.slices, self.basic).apply(grad_outputs)


def _normalize_item(item, device, what):
    """One entry of the index: basic ones unchanged, index arrays on x's device."""
    if isinstance(item, _BASIC_TYPES) or _is_integer(item):
        return item
    if isinstance(item, variable_module.Variable):
        item = item.array
    if isinstance(item, (list, tuple)):
        item = numpy.asarray(item)
        if item.size == 0:
            item = item.astype(numpy.intp)
    if isinstance(item, (bool, numpy.bool_)):
        item = numpy.asarray(item)
    kind = getattr(getattr(item, 'dtype', None), 'kind', None)
    if kind not in ('i', 'u', 'b'):
        raise TypeError(
            f'{what}: slices must hold ints, slices, None, Ellipsis, or int or bool '
            f'arrays, got {type(item).__name__}'
            + (f' of dtype {item.dtype}' if kind else ''))
    return backend.to_device(item, device)


def normalize_slices(x, slices, what='get_item'):
    """Return (slices as a tuple with index arrays on x's device, whether all are basic)."""
    if not isinstance(slices, tuple):
        slices = (slices,)
    device = backend.get_device_from_array(x)
    slices = tuple(_normalize_item(item, device, what) for item in slices)
    n_ellipsis = sum(1 for item in slices if item is Ellipsis)
    if n_ellipsis > 1:
        raise ValueError(f'{what}: slices may hold at most one Ellipsis, got {n_ellipsis}')
    basic = all(isinstance(item, _BASIC_TYPES) or _is_integer(item) for item in slices)
    return slices, basic


def get_item(x, slices):
    """Return ``x[slices]`` with numpy's indexing rules; supports double backprop.

    Basic indexing (ints, slices with any step, None, Ellipsis) and advanced indexing
    (int arrays, bool masks, lists) both work. In backward, the gradient is scattered
    back with an add, so an element picked several times gets the sum of its gradients.
    This is also ``Variable.__getitem__``.

    Args:
        x (Variable or array): input.
        slices: an index as numpy takes it, or a tuple of them; index arrays may be
            numpy arrays, lists or Variables.

    Returns:
        Variable: ``x[slices]`` (a view of x for basic indexing).

    Raises:
        TypeError: an index entry is of a type numpy does not index with.
        IndexError: an index is out of range (raised by the array module).

    >>> import numpy as np
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> get_item(x, (slice(None), [0, 0, 2])).array
    array([[0., 0., 2.],
           [3., 3., 5.]])
    """
    slices, basic = normalize_slices(variable_module.as_array(x), slices)
    return GetItem(slices, basic).apply((x,))[0]
