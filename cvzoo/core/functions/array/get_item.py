"""get_item: numpy indexing, basic and advanced; also ``Variable.__getitem__``."""

import numbers

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module

_BASIC_TYPES = (slice, type(None), type(Ellipsis))


def _is_integer(item):
    return isinstance(item, (numbers.Integral, numpy.integer)) and not isinstance(item, bool)


class GetItem(function_node.FunctionNode):
    def __init__(self, slices, unique):
        self.slices = slices
        self.unique = unique  # whether no element is selected twice

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        return x[self.slices],

    def backward(self, indexes, grad_outputs):
        grad = _GetItemGrad(self.slices, self.unique, self.in_shape)
        return grad.apply(grad_outputs)


class _GetItemGrad(function_node.FunctionNode):
    """Scatter gy into zeros of the input's shape; repeated indexes accumulate."""

    def __init__(self, slices, unique, in_shape):
        self.slices = slices
        self.unique = unique
        self.in_shape = in_shape

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        gx = xp.zeros(self.in_shape, dtype=gy.dtype)
        if self.unique:
            gx[self.slices] = gy
        else:
            # NOTE: add.at is unbuffered, so repeated indexes accumulate; it is much
            # slower than an assignment, hence the uniqueness test in get_item.
            backend.add_at(gx, self.slices, gy)
        return gx,

    def backward(self, indexes, grad_outputs):
        return GetItem(self.slices, self.unique).apply(grad_outputs)


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


def _consumed_axes(item):
    """How many axes of x an index entry (not Ellipsis) consumes."""
    if item is None:
        return 0
    if getattr(item, 'dtype', None) == numpy.bool_:
        return max(item.ndim, 1)
    return 1


def selects_each_once(slices, shape):
    """Whether indexing an array of ``shape`` with normalized ``slices`` never repeats an element.

    True for basic indexing and for one bool mask; for one int array on the host, True
    when its entries (taken modulo the axis size) are distinct. Several arrays, or an int
    array on a GPU: False (not checked).
    """
    arrays = [i for i, item in enumerate(slices) if hasattr(item, 'dtype')]
    if not arrays:
        return True
    if len(arrays) > 1:
        return False
    position = arrays[0]
    item = slices[position]
    if item.dtype == numpy.bool_:
        return True
    consumed = [_consumed_axes(s) for s in slices if s is not Ellipsis]
    axis = 0
    for entry in slices[:position]:
        axis += len(shape) - sum(consumed) if entry is Ellipsis else _consumed_axes(entry)
    if backend.get_array_module(item) is not numpy:
        return False  # testing on a GPU would sync; its scatter-add is fast anyway
    size = shape[axis] if axis < len(shape) else 0
    flat = (item % size).ravel() if size else item.ravel()
    return int(numpy.unique(flat).size) == flat.size


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
    slices, _ = normalize_slices(variable_module.as_array(x), slices)
    return GetItem(slices, selects_each_once(slices, x.shape)).apply((x,))[0]
