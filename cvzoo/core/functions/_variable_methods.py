"""Array-like methods on Variable (reshape, transpose, T, indexing, matmul)."""

from cvzoo.core import variable as variable_module


def _reshape(self, *shape):
    from cvzoo.core.functions.array import reshape  # noqa: PLC0415

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return reshape.reshape(self, shape)


def _transpose(self, *axes):
    from cvzoo.core.functions.array import transpose  # noqa: PLC0415

    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return transpose.transpose(self, axes or None)


def _getitem(self, slices):
    from cvzoo.core.functions.array import get_item  # noqa: PLC0415

    return get_item.get_item(self, slices)


def _matmul(self, other):
    from cvzoo.core.functions.math import matmul  # noqa: PLC0415

    return matmul.matmul(self, other)


def _rmatmul(self, other):
    from cvzoo.core.functions.math import matmul  # noqa: PLC0415

    return matmul.matmul(other, self)


def install():
    """Attach the methods to Variable."""
    Variable = variable_module.Variable
    Variable.reshape = _reshape
    Variable.transpose = _transpose
    Variable.T = property(lambda self: _transpose(self))
    Variable.__getitem__ = _getitem
    Variable.__matmul__ = _matmul
    Variable.__rmatmul__ = _rmatmul
