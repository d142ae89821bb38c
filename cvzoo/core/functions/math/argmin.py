"""argmin: index of the smallest element (no gradient)."""

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.math import argmax as argmax_module


def argmin(x, axis=None):
    """Index of the smallest element of ``x`` along ``axis``; not differentiable.

    Ties give the first index, as numpy does.

    Args:
        x (Variable or array): input.
        axis (None or int): axis to search; None searches the flattened array.

    Returns:
        Variable: int32 indexes, x's shape without ``axis`` (0-d for None); it needs no
        gradient.
    """
    argmax_module.check_axis('argmin', x, axis)
    array = variable_module.as_array(x)
    xp = backend.get_array_module(array)
    index = xp.asarray(array.argmin(axis=axis), dtype=numpy.int32)
    return variable_module.Variable(index, requires_grad=False)
