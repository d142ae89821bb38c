"""Top-k classification accuracy."""

import numpy

from cvzoo import errors


def eval_classification(pred_scores, gt_labels, top_k=(1, 5)):
    """Top-k accuracy of class scores.

    Args:
        pred_scores: (N, n_class) float scores or probabilities, or an iterable of such
            batches (concatenated).
        gt_labels: (N,) int class ids, or an iterable of batches; -1 = ignored example.
        top_k (tuple of int): the k to report.

    Returns:
        dict: ``'top<k>'`` -> float, the fraction of examples whose class is among the k
        highest scores (ties broken towards the smaller class id); nan with no example.

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
    true_score = scores[numpy.arange(len(labels)), labels][:, None]
    column = numpy.arange(scores.shape[1])[None, :]
    # NOTE: the rank of the true class counts every higher score and every equal score
    # of a smaller class id, so the result does not depend on a sort's tie order.
    ahead = (scores > true_score) | ((scores == true_score) & (column < labels[:, None]))
    rank = ahead.sum(axis=1)
    # NOTE: a NaN compares False with every score, so a NaN true score would rank first;
    # it is never a hit (training reports accuracy on NaN outputs before it stops).
    rank[numpy.isnan(true_score[:, 0])] = scores.shape[1]
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
