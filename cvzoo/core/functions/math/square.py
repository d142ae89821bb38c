"""square: elementwise x * x."""

from cvzoo.core import backend, function_node


class Square(function_node.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] * inputs[0],

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 2 * x * grad_outputs[0],


def square(x):
    """Elementwise square ``x * x``; supports double backprop.

    Args:
        x (Variable or array): float.

    Returns:
        Variable: of x's shape and dtype.
    """
    if not backend.is_float_dtype(x.dtype):
        raise TypeError(f'square: x must be a float array, got dtype {x.dtype}')
    return Square().apply((x,))[0]
