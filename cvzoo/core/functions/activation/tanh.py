"""tanh: hyperbolic tangent."""

from cvzoo.core import backend, function_node


class Tanh(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        return xp.tanh(x),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * (1 - y * y),


def tanh(x):
    """Hyperbolic tangent elementwise. Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``, values in [-1, 1].
    """
    return Tanh().apply((x,))[0]
