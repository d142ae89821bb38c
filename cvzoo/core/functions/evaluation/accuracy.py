"""accuracy: the fraction of correct class predictions, top-1 or top-k.

:func:`true_class_rank` is the one definition of a hit that cvzoo uses: F.accuracy reports
it while training, :func:`cvzoo.evaluators.eval_classification` over a whole dataset.
"""

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core import variable as variable_module


def true_class_rank(y, t):
    """Rank of each true class among its example's scores along axis 1.

    The rank counts the classes scored higher and those scored equal with a smaller class
    id, so that a tie goes to the smaller id (as ``argmax``) whatever the sort order; a
    NaN true score ranks last (``C``): it is never a hit. The true class is among the
    top k when its rank is below k.

    Args:
        y (array): (N, C) or (N, C, d1, ...) scores (NumPy or CuPy).
        t (array): (N,) or (N, d1, ...) int labels; entries outside ``[0, C)`` (ignored
            labels) get a meaningless rank, for the caller to leave out.

    Returns:
        array: t's shape, int.

    >>> import numpy as np
    >>> true_class_rank(np.array([[0.1, 0.9, 0.5], [0.5, 0.5, 0.0]]), np.array([2, 1]))
    array([1, 1])
    """
    xp = backend.get_array_module(y)
    n_class = y.shape[1]
    label = xp.clip(t, 0, n_class - 1)[:, None]
    true_score = xp.take_along_axis(y, label, axis=1)
    column = xp.arange(n_class).reshape((1, n_class) + (1,) * (y.ndim - 2))
    ahead = (y > true_score) | ((y == true_score) & (column < label))
    return xp.where(xp.isnan(true_score[:, 0]), n_class, ahead.sum(axis=1))


def accuracy(y, t, ignore_label=None, k=1):
    """Fraction of elements whose label is among the ``k`` highest scores along axis 1.

    Not differentiable: the result needs no gradient and records no graph.

    Args:
        y (Variable or array): (N, C) or (N, C, d1, ...) float scores.
        t (Variable or array): (N,) or (N, d1, ...) int32 labels.
        ignore_label (int or None): labels with this value are not counted.
        k (int): top-k accuracy; 1 (the default) is the fraction where the highest score
            is the label's. Ties go to the smaller class id (:func:`true_class_rank`).

    Returns:
        Variable: 0-d, y's dtype. 0 when every label is ignored.

    Raises:
        ValueError: t's shape is not y's shape without axis 1.
        TypeError: t is not an integer array.
        cvzoo.errors.UsageError: ``k`` is not a positive int.

    >>> import numpy as np
    >>> y = np.array([[0.1, 0.9, 0.5], [0.8, 0.2, 0.6]])
    >>> accuracy(y, np.array([1, 1])).array
    array(0.5)
    >>> accuracy(y, np.array([2, 1]), k=2).array
    array(0.5)
    """
    y, t = variable_module.as_array(y), variable_module.as_array(t)
    if t.dtype.kind not in 'iu':
        raise TypeError(f'accuracy: t must be an integer array, got {t.dtype}')
    if y.ndim < 2 or t.shape != y.shape[:1] + y.shape[2:]:
        raise ValueError(f'accuracy: t must have the shape of y without axis 1; got y '
                         f'{y.shape} and t {t.shape}')
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise errors.UsageError(f'k: expected a positive int, got {k!r}')
    xp = backend.get_array_module(y)
    correct = true_class_rank(y, t) < k
    if ignore_label is None:
        count = t.size
        hits = correct.sum()
    else:
        valid = t != ignore_label
        count = valid.sum()
        hits = (correct & valid).sum()
    value = xp.where(count > 0, hits / xp.maximum(count, 1), 0)
    return variable_module.Variable(xp.asarray(value, dtype=y.dtype), requires_grad=False)
