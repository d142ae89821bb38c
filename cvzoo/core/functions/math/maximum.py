"""maximum: elementwise larger of two arrays, with broadcasting."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast


def check_pair(what, a, b):
    """Raise TypeError/ValueError unless ``a`` and ``b`` are float, same dtype, broadcastable."""
    if a.dtype != b.dtype:
        raise TypeError(f'{what}: a and b must share a dtype, got {a.dtype} and {b.dtype}')
    if not backend.is_float_dtype(a.dtype):
        raise TypeError(f'{what}: a and b must be float arrays, got dtype {a.dtype}')
    for m, n in zip(a.shape[::-1], b.shape[::-1]):
        if m != n and 1 not in (m, n):
            raise ValueError(f'{what}: shapes of a {a.shape} and b {b.shape} do not broadcast')


def masked_grads(indexes, gy, first, a, b):
    """Gradients of a pairwise selection: gy where ``first`` (a bool array) to a, else to b."""
    first = backend.get_array_module(first).broadcast_to(first, gy.shape)
    result = []
    for i, (x, picked) in enumerate(((a, first), (b, ~first))):
        if i in indexes:
            # NOTE: the mask is a constant of the graph, so the second derivative is 0.
            mask = variable_module.Variable(picked.astype(gy.dtype), requires_grad=False)
            gx = gy * mask
            result.append(gx if gx.shape == x.shape else broadcast.sum_to(gx, x.shape))
    return tuple(result)


class Maximum(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        xp = backend.get_array_module(a, b)
        self.retain_inputs((0, 1))
        return xp.maximum(a, b),

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        return masked_grads(indexes, grad_outputs[0], a.array >= b.array, a, b)


def maximum(a, b):
    """Elementwise maximum of ``a`` and ``b`` with broadcasting; supports double backprop.

    Where ``a == b`` the whole gradient goes to ``a``.

    Args:
        a (Variable or array): float.
        b (Variable or array): of a's dtype, broadcastable with a.

    Returns:
        Variable: of the broadcast shape.
    """
    check_pair('maximum', a, b)
    return Maximum().apply((a, b))[0]
