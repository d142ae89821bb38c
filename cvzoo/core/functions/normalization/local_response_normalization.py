"""local_response_normalization: divide by the energy of neighbouring channels."""

import numbers

from cvzoo.core import function_node


class _ChannelWindowSum(function_node.FunctionNode):
    """Sum over the channels c - half_n ... c + half_n (axis 1), zero outside.

    The window is symmetric, so the operation is its own adjoint: backward applies it
    to the output gradient, and double backprop comes free.
    """

    def __init__(self, half_n):
        self.half_n = half_n

    def forward(self, inputs):
        x, = inputs
        y = x.copy()
        for i in range(1, self.half_n + 1):
            y[:, i:] += x[:, :-i]
            y[:, :-i] += x[:, i:]
        return y,

    def backward(self, indexes, grad_outputs):
        return _ChannelWindowSum(self.half_n).apply(grad_outputs)


def local_response_normalization(x, n=5, k=2, alpha=1e-4, beta=0.75):
    """Local response normalisation across channels (Krizhevsky et al., NIPS 2012).

    ``y_c = x_c / (k + alpha * sum_{c'} x_{c'}^2) ^ beta``, the sum running over the
    channels ``c - n // 2 ... c + n // 2`` that exist (Chainer's definition: no division
    by n). Composed of differentiable functions, so it supports double backprop.

    Args:
        x (Variable or array): (N, C, ...) float.
        n (int): window size (an odd number; an even n uses n + 1 channels, as Chainer).
        k, alpha, beta (float): the constants of the formula.

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: x has fewer than 2 axes or n is not a positive int.
    """
    if x.ndim < 2:
        raise ValueError(f'local_response_normalization: x must have at least 2 axes, '
                         f'got {x.shape}')
    if not isinstance(n, numbers.Integral) or n <= 0:
        raise ValueError(f'local_response_normalization: n must be a positive int, got {n!r}')
    square = x * x
    scale = _ChannelWindowSum(int(n) // 2).apply((square,))[0] * alpha + k
    return x * scale ** -beta
