"""eval_classification: top-k accuracy."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_classification import eval_classification


def test_top_k_hand_computed():
    scores = numpy.array([[0.1, 0.5, 0.2, 0.2],
                          [0.7, 0.1, 0.1, 0.1],
                          [0.2, 0.2, 0.3, 0.3]])
    labels = numpy.array([2, 0, 1])
    # ranks of the true class: 1 (class 2 ties with class 3 and comes first), 0, and 3
    # (class 1 ties with class 0, which comes first)
    assert eval_classification(scores, labels, top_k=(1, 2, 3, 4)) == pytest.approx(
        {'top1': 1 / 3, 'top2': 2 / 3, 'top3': 2 / 3, 'top4': 1.0})


def test_batches_and_ignored_labels():
    scores = [numpy.eye(3)[:2], numpy.eye(3)[2:]]
    labels = [numpy.array([0, -1]), numpy.array([1])]
    assert eval_classification(scores, labels, top_k=(1,)) == {'top1': 0.5}


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match='gt_labels'):
        eval_classification(numpy.eye(3), numpy.array([0, 1]))
    with pytest.raises(ValueError, match='gt_labels'):
        eval_classification(numpy.eye(3), numpy.array([0, 1, 3]))
    with pytest.raises(ValueError, match='top_k'):
        eval_classification(numpy.eye(3), numpy.array([0, 1, 2]), top_k=(0,))


def test_agrees_with_the_training_accuracy(rng):
    """One definition of a hit: the dataset metric equals F.accuracy's top-k, ties and
    NaN scores included."""
    import cvzoo.core.functions as F

    scores = rng.integers(0, 3, (40, 6)).astype(numpy.float32)
    scores[::7, 2] = numpy.nan
    labels = rng.integers(0, 6, 40).astype(numpy.int32)
    result = eval_classification(scores, labels, top_k=range(1, 7))
    for k in range(1, 7):
        assert result[f'top{k}'] == pytest.approx(float(F.accuracy(scores, labels, k=k).array))
