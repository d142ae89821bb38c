"""The cvzoo engine: define-by-run autograd on NumPy (CPU) and CuPy (GPU).

It knows nothing about images. ``import cvzoo.core.functions as F`` and
``import cvzoo.core.links as L`` give the differentiable functions and layers.
"""

from cvzoo.core import functions  # noqa: F401 - installs Variable's operators
from cvzoo.core.backend import get_array_module, get_device, to_device, to_numpy
from cvzoo.core.backprop import grad
from cvzoo.core.config import force_backprop_mode, no_backprop_mode, using_config
from cvzoo.core.function_node import FunctionNode
from cvzoo.core.mixed_precision import autocast
from cvzoo.core.variable import Parameter, Variable, as_array, as_variable

__all__ = [
    'FunctionNode', 'Parameter', 'Variable', 'as_array', 'as_variable', 'autocast',
    'force_backprop_mode', 'get_array_module', 'get_device', 'grad', 'no_backprop_mode',
    'to_device', 'to_numpy', 'using_config',
]
