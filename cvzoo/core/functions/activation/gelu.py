"""gelu: x * Phi(x), Phi the standard normal distribution function."""

import math

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.activation import tanh as tanh_module
from cvzoo.core.functions.math import exponential

_SERIES_TERMS = 40  # enough for float64 accuracy on |x| < 2.5
_FRACTION_TERMS = 30  # enough for float64 accuracy on |x| >= 2.5
_SWITCH = 2.5


def _erf(x):
    """Error function of a float array, to about 1e-15, on any array module.

    NumPy has no erf, so it is computed here: the series
    ``erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2 x^2)^n x / (1 * 3 * ... * (2n + 1))``
    (all terms positive, so no cancellation) for small ``|x|``, and the continued
    fraction ``erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / ...)))``
    for large ``|x|`` (Abramowitz and Stegun 7.1.6 and 7.1.14).
    """
    xp = backend.get_array_module(x)
    dtype = x.dtype.type
    ax = xp.abs(x)
    small = xp.minimum(ax, dtype(_SWITCH))
    square = small * small
    term = small.copy()
    total = small.copy()
    for n in range(_SERIES_TERMS):
        term *= square * dtype(2.0 / (2 * n + 3))
        total += term
    series = total * xp.exp(-square) * dtype(2.0 / math.sqrt(math.pi))
    large = xp.maximum(ax, dtype(_SWITCH))
    fraction = large.copy()
    for n in range(_FRACTION_TERMS, 0, -1):
        fraction = large + dtype(n / 2.0) / fraction
    tail = dtype(1) - xp.exp(-large * large) / (fraction * dtype(math.sqrt(math.pi)))
    return xp.sign(x) * xp.where(ax < _SWITCH, series, tail)


class _NormalCdf(function_node.FunctionNode):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2; its derivative is the normal density."""

    def forward(self, inputs):
        x, = inputs
        self.retain_inputs((0,))
        half = x.dtype.type(0.5)
        return (_erf(x * x.dtype.type(1 / math.sqrt(2))) + 1) * half,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        density = exponential.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        return grad_outputs[0] * density,


def gelu(x, approximate='none'):
    """Gaussian error linear unit (Hendrycks and Gimpel, GELUs, 2016).

    ``gelu(x) = x * Phi(x)`` with Phi the standard normal distribution function, or,
    with ``approximate='tanh'``,
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``. Both forms are
    composed of differentiable functions, so they support double backprop.

    Args:
        x (Variable or array): input of any shape, float.
        approximate (str): ``'none'`` for the exact erf form, ``'tanh'`` for the
            approximation.

    Returns:
        Variable: same shape and dtype as ``x``.

    Raises:
        ValueError: ``approximate`` is not ``'none'`` or ``'tanh'``.
    """
    x = variable_module.as_variable(x)
    if approximate == 'none':
        return x * _NormalCdf().apply((x,))[0]
    if approximate == 'tanh':
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * (tanh_module.tanh(inner) + 1) * 0.5
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
