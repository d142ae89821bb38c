"""swish: x * sigmoid(beta * x)."""

import numbers

from cvzoo.core import variable as variable_module
from cvzoo.core.functions.activation import sigmoid as sigmoid_module
from cvzoo.core.functions.array import reshape


def swish(x, beta=1.0):
    """Swish (Ramachandran et al., Searching for Activation Functions, 2017).

    ``swish(x) = x * sigmoid(beta * x)``. Composed of differentiable functions, so it
    supports double backprop, also with respect to ``beta``.

    Args:
        x (Variable or array): (N, C, ...) float.
        beta (float, Variable or array): a number, or a parameter of shape
            ``x.shape[1:1 + beta.ndim]`` (usually (C,)) broadcast over the batch and
            trailing axes, as Chainer's; same dtype as ``x``.

    Returns:
        Variable: same shape and dtype as ``x``.

    Raises:
        ValueError: ``beta``'s shape does not match ``x``'s axes 1...
        TypeError: ``beta`` is neither a number nor an array of ``x``'s dtype.
    """
    x = variable_module.as_variable(x)
    if isinstance(beta, numbers.Real):
        return x * sigmoid_module.sigmoid(x * float(beta))
    if not hasattr(beta, 'shape'):
        raise TypeError(f'swish: beta must be a number or an array, got {type(beta).__name__}')
    if beta.dtype != x.dtype:
        raise TypeError(f'swish: beta must have x\'s dtype {x.dtype}, got {beta.dtype}')
    if beta.ndim and tuple(x.shape[1:1 + beta.ndim]) != tuple(beta.shape):
        raise ValueError(
            f'swish: beta must have the shape of x.shape[1:1 + beta.ndim]; got beta '
            f'{beta.shape} for x {x.shape}')
    shape = (1,) + tuple(beta.shape) + (1,) * (x.ndim - 1 - beta.ndim)
    return x * sigmoid_module.sigmoid(x * reshape.reshape(beta, shape))
