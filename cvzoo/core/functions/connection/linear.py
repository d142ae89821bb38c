"""linear: an affine map ``x W^T + b`` over the last axes of x."""

from cvzoo.core import backend, function_node, gemm, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import reshape as reshape_module
from cvzoo.core.functions.array import transpose as transpose_module
from cvzoo.core.functions.math import sum as sum_module


def _affine(inputs):
    x, W = inputs[:2]
    y = gemm.matmul(x, W.T)
    if len(inputs) == 3:
        y += inputs[2]
    return y,


class Linear(function_node.FunctionNode):
    """y = x W^T + b for a 2-D x (B, I), W (O, I), b (O,)."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return mixed_precision.compute_in_float32_on_host(_affine, inputs)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy, = grad_outputs
        result = []
        if 0 in indexes:
            # gx = gy W, written as linear(gy, W^T) so that it is differentiable again.
            result.append(Linear().apply((gy, transpose_module.transpose(W)))[0])
        if 1 in indexes:
            # gW = gy^T x = linear(gy^T, x^T).
            result.append(Linear().apply((
                transpose_module.transpose(gy), transpose_module.transpose(x)))[0])
        if 2 in indexes:
            result.append(sum_module.sum(gy, axis=0))
        return tuple(result)


def linear(x, W, b=None, n_batch_axes=1):
    """Linear (fully connected) layer function: ``y = x W^T + b``.

    The axes of x after the first ``n_batch_axes`` are flattened into one feature axis.
    Double backprop is supported. Under ``cvzoo.core.autocast`` x, W and b are cast to its
    dtype, and so is the result.

    Args:
        x (Variable or array): (B_1, ..., B_k, F_1, ..., F_m) float input, k =
            n_batch_axes, with F_1 * ... * F_m = I.
        W (Variable or array): (O, I) weight, of x's dtype.
        b (Variable, array or None): (O,) bias.
        n_batch_axes (int): the number of leading axes of x kept as batch axes, >= 1.

    Returns:
        Variable: (B_1, ..., B_k, O) of x's dtype.

    Raises:
        ValueError: a feature size that does not match W.shape[1], a bad bias shape or
            n_batch_axes out of range.
        TypeError: non-float or mixed dtypes.

    >>> import numpy as np
    >>> x = np.ones((2, 3, 4), np.float32)
    >>> linear(x, np.ones((5, 12), np.float32)).shape
    (2, 5)
    >>> linear(x, np.ones((5, 4), np.float32), n_batch_axes=2).shape
    (2, 3, 5)
    """
    x, W = variable_module.as_variable(x), variable_module.as_variable(W)
    b = None if b is None else variable_module.as_variable(b)
    x, W, b = mixed_precision.cast_to_low_precision(x, W, b)
    _check(x, W, b, n_batch_axes)
    batch_shape = tuple(x.shape[:n_batch_axes])
    if x.ndim != 2:
        x = reshape_module.reshape(x, (_product(batch_shape), W.shape[1]))
    y = Linear().apply((x, W) if b is None else (x, W, b))[0]
    if n_batch_axes != 1:
        y = reshape_module.reshape(y, batch_shape + (W.shape[0],))
    return y


def _product(values):
    result = 1
    for v in values:
        result *= v
    return result


def _check(x, W, b, n_batch_axes):
    if not isinstance(n_batch_axes, int) or not 1 <= n_batch_axes < x.ndim:
        raise ValueError(
            f'linear: n_batch_axes must be an int in [1, x.ndim - 1] = [1, {x.ndim - 1}], '
            f'got {n_batch_axes!r}')
    for name, array in (('x', x), ('W', W), ('b', b)):
        if array is not None and (
                not backend.is_float_dtype(array.dtype) or array.dtype != x.dtype):
            raise TypeError(
                f'linear: {name} must be a float array of x.dtype ({x.dtype}), '
                f'got {array.dtype}')
    if W.ndim != 2:
        raise ValueError(f'linear: W must be 2-D (out_size, in_size), got shape {W.shape}')
    in_size = _product(x.shape[n_batch_axes:])
    if in_size != W.shape[1]:
        raise ValueError(
            f'linear: the input size (the product of x.shape[{n_batch_axes}:] = '
            f'{x.shape[n_batch_axes:]}) must equal W.shape[1], got x.shape={x.shape}, '
            f'W.shape={W.shape}')
    if b is not None and b.shape != (W.shape[0],):
        raise ValueError(f'linear: b must have shape ({W.shape[0]},), got {b.shape}')
