"""relu6: min(max(x, 0), 6)."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


class ReLU6(function_node.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        return xp.clip(x, x.dtype.type(0), x.dtype.type(6)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        mask = y.xp.asarray((y.array > 0) & (y.array < 6), dtype=y.dtype)
        return grad_outputs[0] * variable_module.Variable(mask, requires_grad=False),


def relu6(x):
    """ReLU clipped at 6, ``min(max(x, 0), 6)`` elementwise (MobileNet).

    The gradient is 0 at the kinks 0 and 6. Supports double backprop.

    Args:
        x (Variable or array): input of any shape, float.

    Returns:
        Variable: same shape and dtype as ``x``.
    """
    return ReLU6().apply((x,))[0]
