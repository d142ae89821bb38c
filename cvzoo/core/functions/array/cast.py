"""cast: convert to another dtype."""

import numpy

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class Cast(function_node.FunctionNode):
    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, inputs):
        x, = inputs
        self.in_dtype = x.dtype
        return x.astype(self.dtype),

    def backward(self, indexes, grad_outputs):
        return cast(grad_outputs[0], self.in_dtype),


def cast(x, dtype):
    """Convert ``x`` to ``dtype``; supports double backprop between float dtypes.

    The result of a cast to a non-float dtype has no gradient.

    Args:
        x (Variable or array): input.
        dtype: a numpy dtype or anything ``numpy.dtype`` takes.

    Returns:
        Variable: x's values as ``dtype``; x itself (as a Variable) when it already is.

    >>> import numpy as np
    >>> cast(np.array([1.5]), np.float32).dtype
    dtype('float32')
    """
    try:
        dtype = numpy.dtype(dtype)
    except TypeError:
        raise TypeError(f'cast: dtype must be a numpy dtype, got {dtype!r}') from None
    if x.dtype == dtype:
        return variable_module.as_variable(x)
    if not backend.is_float_dtype(dtype) or not backend.is_float_dtype(x.dtype):
        array = variable_module.as_array(x).astype(dtype)
        return variable_module.Variable(array, requires_grad=False)
    return Cast(dtype).apply((x,))[0]
