"""accuracy: the fraction of correct class predictions."""

from cvzoo.core import backend
from cvzoo.core import variable as variable_module


def accuracy(y, t, ignore_label=None):
    """Fraction of elements whose highest score along axis 1 is the label.

    Not differentiable: the result needs no gradient and records no graph.

    Args:
        y (Variable or array): (N, C) or (N, C, d1, ...) float scores.
        t (Variable or array): (N,) or (N, d1, ...) int32 labels.
        ignore_label (int or None): labels with this value are not counted.

    Returns:
        Variable: 0-d, y's dtype. 0 when every label is ignored.

    Raises:
        ValueError: t's shape is not y's shape without axis 1.
        TypeError: t is not an integer array.

    >>> import numpy as np
    >>> accuracy(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 1])).array
    array(0.5)
    """
    y, t = variable_module.as_array(y), variable_module.as_array(t)
    if t.dtype.kind not in 'iu':
        raise TypeError(f'accuracy: t must be an integer array, got {t.dtype}')
    if y.ndim < 2 or t.shape != y.shape[:1] + y.shape[2:]:
        raise ValueError(f'accuracy: t must have the shape of y without axis 1; got y '
                         f'{y.shape} and t {t.shape}')
    xp = backend.get_array_module(y)
    correct = y.argmax(axis=1) == t
    if ignore_label is None:
        count = t.size
        hits = correct.sum()
    else:
        valid = t != ignore_label
        count = valid.sum()
        hits = (correct & valid).sum()
    value = xp.where(count > 0, hits / xp.maximum(count, 1), 0)
    return variable_module.Variable(xp.asarray(value, dtype=y.dtype), requires_grad=False)
