"""hard_swish: x * relu6(x + 3) / 6."""

from cvzoo.core import variable as variable_module
from cvzoo.core.functions.activation import relu6 as relu6_module


def hard_swish(x):
    """Hard swish of MobileNetV3 (Howard et al., Searching for MobileNetV3, ICCV 2019).

    ``hard_swish(x) = x * relu6(x + 3) / 6``. Composed of differentiable functions, so it
    supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``.
    """
    x = variable_module.as_variable(x)
    return x * relu6_module.relu6(x + 3.0) * (1.0 / 6.0)
