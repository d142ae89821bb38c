"""transpose: permute the axes."""

import numpy

from cvzoo.core import function_node


class Transpose(function_node.FunctionNode):
    def __init__(self, axes):
        self.axes = axes

    def forward(self, inputs):
        return inputs[0].transpose(self.axes),

    def backward(self, indexes, grad_outputs):
        inverse = tuple(numpy.argsort(self.axes)) if self.axes is not None else None
        return transpose(grad_outputs[0], inverse),


def transpose(x, axes=None):
    """Permute the axes of ``x``.

    Args:
        x (Variable or array): input.
        axes (tuple of int): the new order; None reverses the axes.

    Returns:
        Variable: a view with permuted axes.
    """
    if axes is not None:
        axes = tuple(int(a) % x.ndim if x.ndim else int(a) for a in axes)
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(f'transpose: axes {axes} are not a permutation of {x.ndim} axes')
    return Transpose(axes).apply((x,))[0]
