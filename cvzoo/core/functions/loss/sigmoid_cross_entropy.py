"""sigmoid_cross_entropy: binary cross entropy on raw scores."""

from cvzoo.core import backend, function_node, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.activation import sigmoid as sigmoid_module

_IGNORE_LABEL = -1


class SigmoidCrossEntropy(function_node.FunctionNode):
    def __init__(self, normalize, reduce):
        self.normalize = normalize
        self.reduce = reduce

    def forward(self, inputs):
        x, t = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0, 1))
        valid = t != _IGNORE_LABEL
        # NOTE: log(1 + exp(-|x|)) + max(x, 0) - x * t is -t log s - (1 - t) log(1 - s)
        # without overflow for any x (s = sigmoid(x)).
        loss = xp.log1p(xp.exp(-xp.abs(x)))
        loss += xp.maximum(x, x.dtype.type(0)) - x * t.astype(x.dtype)
        self.coeff = valid.astype(x.dtype)
        loss *= self.coeff
        if self.reduce == 'no':
            return loss,
        if self.normalize:
            denominator = max(int(valid.sum()), 1)
        else:
            denominator = max(x.shape[0], 1)
        self.coeff /= x.dtype.type(denominator)
        return xp.asarray(loss.sum() / denominator, dtype=x.dtype),

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        gy, = grad_outputs
        target = variable_module.Variable(t.array.astype(x.dtype), requires_grad=False)
        coeff = variable_module.Variable(self.coeff, requires_grad=False)
        return (sigmoid_module.sigmoid(x) - target) * coeff * gy, None


def sigmoid_cross_entropy(x, t, normalize=True, reduce='mean'):
    """Binary cross entropy between ``sigmoid(x)`` and labels ``t`` in {0, 1}.

    The loss of one element is ``-t log(s) - (1 - t) log(1 - s)`` with
    ``s = sigmoid(x)``, computed as ``log1p(exp(-|x|)) + max(x, 0) - x t`` (stable for
    any x). Elements labelled -1 are ignored and give 0. Supports double backprop.

    Args:
        x (Variable or array): float scores of any shape (N, ...).
        t (Variable or array): int32 labels of x's shape: 0, 1, or -1 (ignored).
        normalize (bool): with ``reduce='mean'``, divide the sum by the number of
            non-ignored elements (True) or by N (False).
        reduce (str): ``'mean'`` gives a 0-d loss, ``'no'`` the loss of each element.

    Returns:
        Variable: 0-d, or x's shape with ``reduce='no'``; x's dtype.

    Raises:
        ValueError: shapes differ or ``reduce`` is unknown.
        TypeError: ``t`` is not an integer array.
    """
    x, = mixed_precision.cast_to_float32(x)
    if reduce not in ('mean', 'no'):
        raise ValueError(f"sigmoid_cross_entropy: reduce must be 'mean' or 'no', got {reduce!r}")
    if t.dtype.kind not in 'iu':
        raise TypeError(f'sigmoid_cross_entropy: t must be an integer array, got {t.dtype}')
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f'sigmoid_cross_entropy: x and t must have the same shape, got '
                         f'{x.shape} and {t.shape}')
    return SigmoidCrossEntropy(bool(normalize), reduce).apply((x, t))[0]
