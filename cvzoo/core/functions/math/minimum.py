"""minimum: elementwise smaller of two arrays, with broadcasting."""

from cvzoo.core import backend, function_node
from cvzoo.core.functions.math import maximum as maximum_module


class Minimum(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        xp = backend.get_array_module(a, b)
        self.retain_inputs((0, 1))
        return xp.minimum(a, b),

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        return maximum_module.masked_grads(indexes, grad_outputs[0], a.array <= b.array, a, b)


def minimum(a, b):
    """Elementwise minimum of ``a`` and ``b`` with broadcasting; supports double backprop.

    Where ``a == b`` the whole gradient goes to ``a``.

    Args:
        a (Variable or array): float.
        b (Variable or array): of a's dtype, broadcastable with a.

    Returns:
        Variable: of the broadcast shape.
    """
    maximum_module.check_pair('minimum', a, b)
    return Minimum().apply((a, b))[0]
