"""hard_sigmoid: clip(0.2 * x + 0.5, 0, 1)."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class HardSigmoid(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0,))
        dtype = x.dtype.type
        return xp.clip(x * dtype(0.2) + dtype(0.5), dtype(0), dtype(1)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        inside = (x.array > -2.5) & (x.array < 2.5)
        slope = x.xp.asarray(inside * x.dtype.type(0.2), dtype=x.dtype)
        return grad_outputs[0] * variable_module.Variable(slope, requires_grad=False),


def hard_sigmoid(x):
    """Piecewise-linear sigmoid, ``clip(0.2 * x + 0.5, 0, 1)`` (Chainer's definition).

    The gradient is 0.2 inside (-2.5, 2.5) and 0 outside. Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``, values in [0, 1].
    """
    return HardSigmoid().apply((x,))[0]
