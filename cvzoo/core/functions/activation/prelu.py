"""prelu: leaky relu with a learned slope per channel."""

from cvzoo.core import backend, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast, reshape


def _channel_shape(W_shape, ndim):
    """The shape that puts W's axes at x's axes 1.. and broadcasts over the rest."""
    return (1,) + tuple(W_shape) + (1,) * (ndim - 1 - len(W_shape))


class PReLU(function_node.FunctionNode):
    def forward(self, inputs):
        x, W = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0, 1))
        W_b = W.reshape(_channel_shape(W.shape, x.ndim))
        return xp.where(x > 0, x, x * W_b),

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy, = grad_outputs
        negative = x.xp.asarray(x.array <= 0, dtype=x.dtype)
        negative_var = variable_module.Variable(negative, requires_grad=False)
        result = []
        if 0 in indexes:
            W_b = broadcast.broadcast_to(
                reshape.reshape(W, _channel_shape(W.shape, x.ndim)), x.shape)
            result.append(gy * (1 - negative_var) + gy * negative_var * W_b)
        if 1 in indexes:
            gW = broadcast.sum_to(gy * x * negative_var, _channel_shape(W.shape, x.ndim))
            result.append(reshape.reshape(gW, W.shape))
        return tuple(result)


def prelu(x, W):
    """Parametric ReLU: ``x`` where ``x > 0``, else ``W * x`` with ``W`` per channel.

    Supports double backprop.

    Args:
        x (Variable or array): (N, C, ...) float.
        W (Variable or array): the slopes, of shape ``x.shape[1:1 + W.ndim]`` (usually
            (C,)); broadcast over the batch axis and the trailing axes. Same dtype as x.

    Returns:
        Variable: same shape and dtype as ``x``.

    Raises:
        ValueError: ``W``'s shape does not match ``x``'s axes 1...
        TypeError: ``x`` and ``W`` have different dtypes.
    """
    if W.ndim < 1 or x.ndim < W.ndim + 1 or tuple(x.shape[1:1 + W.ndim]) != tuple(W.shape):
        raise ValueError(
            f'prelu: W must have the shape of x.shape[1:1 + W.ndim]; got W {W.shape} '
            f'for x {x.shape}')
    if x.dtype != W.dtype:
        raise TypeError(f'prelu: x and W must share a dtype, got {x.dtype} and {W.dtype}')
    return PReLU().apply((x, W))[0]
