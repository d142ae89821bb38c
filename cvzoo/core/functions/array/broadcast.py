"""broadcast_to and its adjoint sum_to."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module


def _sum_to_array(x, shape):
    """Sum array ``x`` down to ``shape`` (the inverse of numpy broadcasting)."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1
    )
    y = x.sum(axis=axes, keepdims=True) if axes else x
    return y.reshape(shape) if lead else y


class BroadcastTo(function_node.FunctionNode):
    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        xp = backend.get_array_module(x)
        return xp.broadcast_to(x, self.shape),

    def backward(self, indexes, grad_outputs):
        return sum_to(grad_outputs[0], self.in_shape),


class SumTo(function_node.FunctionNode):
    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        self.in_shape = x.shape
        return _sum_to_array(x, self.shape),

    def backward(self, indexes, grad_outputs):
        return broadcast_to(grad_outputs[0], self.in_shape),


def _check_broadcastable(what, from_shape, to_shape):
    ok = len(from_shape) <= len(to_shape) and all(
        a == b or a == 1 for a, b in zip(from_shape[::-1], to_shape[::-1])
    )
    if not ok:
        raise ValueError(f'{what}: cannot broadcast shape {from_shape} to {to_shape}')


def broadcast_to(x, shape):
    """Broadcast ``x`` to ``shape`` (numpy rules); the result is a read-only view.

    Args:
        x (Variable or array): input.
        shape (tuple of int): target shape.

    Returns:
        Variable: of ``shape``.
    """
    shape = tuple(shape)
    if x.shape == shape:
        return variable_module.as_variable(x)
    _check_broadcastable('broadcast_to', x.shape, shape)
    return BroadcastTo(shape).apply((x,))[0]


def sum_to(x, shape):
    """Sum ``x`` over broadcast axes so its shape becomes ``shape``.

    Args:
        x (Variable or array): input whose shape ``shape`` broadcasts to.
        shape (tuple of int): target shape.

    Returns:
        Variable: of ``shape``.
    """
    shape = tuple(shape)
    _check_broadcastable('sum_to', shape, x.shape)
    return SumTo(shape).apply((x,))[0]
