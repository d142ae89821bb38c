"""sigmoid: 1 / (1 + exp(-x))."""

from cvzoo.core import backend, function_node


class Sigmoid(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        half = x.dtype.type(0.5)
        self.retain_outputs((0,))
        # NOTE: the tanh form never overflows, unlike 1 / (1 + exp(-x)) for x << 0.
        return xp.tanh(x * half) * half + half,

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y * (1 - y),


def sigmoid(x):
    """Logistic sigmoid, ``1 / (1 + exp(-x))`` elementwise, stable for large ``|x|``.

    Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``, values in [0, 1].
    """
    return Sigmoid().apply((x,))[0]
