"""sqrt: elementwise square root."""

from cvzoo.core import backend, function_node


class Sqrt(function_node.FunctionNode):
    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        self.retain_outputs((0,))
        return xp.sqrt(inputs[0]),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] / (2 * y),


def sqrt(x):
    """Elementwise square root ``x ** 0.5``; supports double backprop.

    The gradient ``1 / (2 sqrt(x))`` is infinite at 0.

    Args:
        x (Variable or array): float, non-negative.

    Returns:
        Variable: of x's shape and dtype.
    """
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'sqrt: x must be a float array, got dtype {x.dtype}')
    return Sqrt().apply((x,))[0]
