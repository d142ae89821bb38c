"""matmul: matrix product, batched over leading axes like numpy.matmul."""

from cvzoo.core import backend, function_node, gemm, mixed_precision
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast, reshape


def _swap_last(array, flag):
    return array.swapaxes(-1, -2) if flag else array


def _reduce_to(gx, shape):
    return gx if gx.shape == shape else broadcast.sum_to(gx, shape)


class MatMul(function_node.FunctionNode):
    def __init__(self, transa, transb):
        self.transa = transa
        self.transb = transb

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return mixed_precision.compute_in_float32_on_host(self._product, inputs)

    def _product(self, inputs):
        a, b = inputs
        return gemm.matmul(_swap_last(a, self.transa), _swap_last(b, self.transb)),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ta, tb = self.transa, self.transb
        result = []
        # With A = op(a), B = op(b) and Y = A B: gA = gY B^T and gB = A^T gY; a transposed
        # input gets the transposed gradient.
        if 0 in indexes:
            if ta:
                ga = _matmul_2d_or_more(b, gy, tb, True)
            else:
                ga = _matmul_2d_or_more(gy, b, False, not tb)
            result.append(_reduce_to(ga, a.shape))
        if 1 in indexes:
            if tb:
                gb = _matmul_2d_or_more(gy, a, True, ta)
            else:
                gb = _matmul_2d_or_more(a, gy, not ta, False)
            result.append(_reduce_to(gb, b.shape))
        return tuple(result)


def _matmul_2d_or_more(a, b, transa, transb):
    return MatMul(transa, transb).apply((a, b))[0]


def _check(a, b, transa, transb):
    if a.dtype != b.dtype:
        raise TypeError(f'matmul: a and b must share a dtype, got {a.dtype} and {b.dtype}')
    for name, x in (('a', a), ('b', b)):
        if not backend.is_float_dtype(x.dtype):
            raise TypeError(f'matmul: {name} must be a float array, got dtype {x.dtype}')
        if x.ndim == 0:
            raise ValueError(f'matmul: {name} must have at least 1 axis, got a 0-d array')
    k_a = a.shape[-2] if transa and a.ndim >= 2 else a.shape[-1]
    k_b = b.shape[-1] if transb and b.ndim >= 2 else b.shape[-2 if b.ndim >= 2 else -1]
    if k_a != k_b:
        raise ValueError(
            f'matmul: the inner sizes of a {a.shape} (transa={transa}) and b {b.shape} '
            f'(transb={transb}) differ, {k_a} and {k_b}'
        )
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    for m, n in zip(batch_a[::-1], batch_b[::-1]):
        if m != n and 1 not in (m, n):
            raise ValueError(
                f'matmul: the batch axes of a {a.shape} and b {b.shape} do not broadcast'
            )


def matmul(a, b, transa=False, transb=False):
    """Matrix product ``op(a) @ op(b)``, batched over leading axes like ``numpy.matmul``.

    ``op(x)`` swaps the last two axes of x when its flag is set. Leading (batch) axes
    broadcast. A 1-D operand is a vector, as in numpy: ``a`` of shape (K,) is taken as
    (1, K) and ``b`` of shape (K,) as (K, 1), and the added axis is dropped from the
    result; the transpose flag of a 1-D operand is ignored. Supports double backprop.

    Args:
        a (Variable or array): (..., M, K) float (or (..., K, M) with ``transa``).
        b (Variable or array): (..., K, N) of a's dtype (or (..., N, K) with ``transb``).
        transa (bool): transpose the last two axes of ``a`` first.
        transb (bool): transpose the last two axes of ``b`` first.

    Returns:
        Variable: (..., M, N), the batch axes broadcast.

    Raises:
        ValueError: the inner sizes or the batch axes do not match.
        TypeError: the dtypes differ or are not float.

    >>> import numpy as np
    >>> matmul(np.ones((2, 3, 4)), np.ones((4, 5))).shape
    (2, 3, 5)
    """
    a, b = mixed_precision.cast_to_low_precision(
        variable_module.as_variable(a), variable_module.as_variable(b))
    _check(a, b, transa, transb)
    if a.ndim >= 2 and b.ndim >= 2:
        return _matmul_2d_or_more(a, b, transa, transb)
    a2 = reshape.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    y = _matmul_2d_or_more(a2, b2, transa and a.ndim >= 2, transb and b.ndim >= 2)
    if a.ndim == 1 and b.ndim == 1:
        out_shape = y.shape[:-2]
    elif a.ndim == 1:
        out_shape = y.shape[:-2] + y.shape[-1:]
    else:
        out_shape = y.shape[:-1]
    return reshape.reshape(y, out_shape)
