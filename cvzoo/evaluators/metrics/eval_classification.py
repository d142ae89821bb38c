"""Top-k classification accuracy over a dataset (a hit as F.accuracy counts it:
:func:`cvzoo.core.functions.evaluation.accuracy.true_class_rank`)."""

import numpy

from cvzoo import errors
from cvzoo.core.functions.evaluation import accuracy


def eval_classification(pred_scores, gt_labels, top_k=(1, 5)):
    """Top-k accuracy of class scores.

    Args:
        pred_scores: (N, n_class) float scores or probabilities, or an iterable of such
            batches (concatenated).
        gt_labels: (N,) int class ids, or an iterable of batches; -1 = ignored example.
        top_k (tuple of int): the k to report.

    Returns:
        dict: ``'top<k>'`` -> float, the fraction of examples whose class is among the k
        highest scores (ties broken towards the smaller class id, a NaN true score never
        counts); nan with no example.

    >>> scores = numpy.array([[0.1, 0.9], [0.8, 0.2]])
    >>> eval_classification(scores, numpy.array([1, 1]), top_k=(1,))
    {'top1': 0.5}
    """
    scores = _stack(pred_scores, 2, 'pred_scores')
    labels = _stack(gt_labels, 1, 'gt_labels').astype(numpy.int64)
    if len(scores) != len(labels):
        raise errors.UsageError(f'gt_labels: expected one label per row of pred_scores '
                                f'({len(scores)}), got {len(labels)}')
    if labels.size and labels.max() >= scores.shape[1]:
        raise errors.UsageError(f'gt_labels: expected classes < {scores.shape[1]} (the columns of '
                                f'pred_scores), got {int(labels.max())}')
    if labels.size and labels.min() < -1:
        raise errors.UsageError(
            f'gt_labels: expected classes >= 0, or -1 for an ignored example, got '
            f'{int(labels.min())}')
    keep = labels >= 0
    scores, labels = scores[keep], labels[keep]
    rank = accuracy.true_class_rank(scores, labels)
    result = {}
    for k in top_k:
        if int(k) < 1:
            raise errors.UsageError(f'top_k: expected positive ints, got {k}')
        result[f'top{int(k)}'] = float((rank < k).mean()) if len(rank) else float('nan')
    return result


def _stack(values, ndim, name):
    array = numpy.asarray(values) if hasattr(values, 'ndim') else None
    if array is None:
        parts = [numpy.asarray(v) for v in values]
        array = numpy.concatenate(parts) if parts else numpy.zeros((0,) * ndim)
    if array.ndim != ndim:
        raise errors.UsageError(f'{name}: expected a {ndim}-d array, got shape {array.shape}')
    return array
