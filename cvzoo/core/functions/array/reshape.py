"""reshape: the same data in another shape."""

from cvzoo.core import function_node


class Reshape(function_node.FunctionNode):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        return x.reshape(self.shape),

    def backward(self, indexes, grad_outputs):
        return reshape(grad_outputs[0], self.in_shape),


def reshape(x, shape):
    """Return ``x`` with a new shape (one entry may be -1).

    Args:
        x (Variable or array): input.
        shape (tuple of int): the new shape, of the same size.

    Returns:
        Variable: a view of x's data when possible.
    """
    shape = tuple(shape)
    n_unknown = sum(1 for n in shape if n == -1)
    size = 1
    for n in shape:
        size *= n if n != -1 else 1
    if n_unknown > 1 or (n_unknown == 0 and size != x.size) or (
        n_unknown == 1 and (size == 0 or x.size % size)
    ):
        raise ValueError(f'reshape: cannot reshape an array of shape {x.shape} into {shape}')
    return Reshape(shape).apply((x,))[0]
