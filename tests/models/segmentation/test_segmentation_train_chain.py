"""Tests of SegmentationTrainChain and enet_class_weight."""

import numpy
import pytest

import cvzoo.core.links as L
from cvzoo.core.training import reporter
from cvzoo.models.segmentation import segmentation_train_chain
from cvzoo.models.segmentation.espnet import espnet


class _Fixed(L.Link):
    """A 'model' returning fixed scores, possibly at half the labels' size."""

    def __init__(self, score):
        super().__init__()
        self.score = score

    def forward(self, x):
        return self.score


def _expected_loss(score, labels, class_weight, ignore_label=-1):
    total, weight_sum = 0.0, 0
    for b, i, j in numpy.ndindex(*labels.shape):
        t = labels[b, i, j]
        if t == ignore_label:
            continue
        logits = score[b, :, i, j].astype(numpy.float64)
        log_p = logits - numpy.log(numpy.exp(logits - logits.max()).sum()) - logits.max()
        w = 1.0 if class_weight is None else class_weight[t]
        total -= w * log_p[t]
        weight_sum += 1
    return total / weight_sum


@pytest.mark.parametrize('weighted', [False, True], ids=['plain', 'class_weight'])
def test_loss_matches_a_loop_and_is_reported(weighted, rng):
    score = rng.standard_normal((2, 4, 3, 5)).astype(numpy.float32)
    labels = rng.integers(-1, 4, (2, 3, 5)).astype(numpy.int32)
    class_weight = numpy.array([0.5, 1.0, 2.0, 3.0], numpy.float32) if weighted else None
    chain = segmentation_train_chain.SegmentationTrainChain(_Fixed(score), class_weight)
    rep = reporter.Reporter()
    rep.add_observer('main', chain)
    observation = {}
    with rep.scope(observation):
        loss = chain(numpy.zeros((2, 3, 3, 5), numpy.float32), labels)
    assert loss.shape == () and loss.dtype == numpy.float32
    assert float(loss.array) == pytest.approx(_expected_loss(score, labels, class_weight),
                                              rel=1e-5)
    assert float(observation['main/loss']) == float(loss.array)


def test_espnet_trains_through_the_chain(rng):
    model = espnet.ESPNet(n_class=5)
    chain = segmentation_train_chain.SegmentationTrainChain(model)
    imgs = rng.standard_normal((2, 3, 16, 24)).astype(numpy.float32)
    labels = rng.integers(-1, 5, (2, 16, 24)).astype(numpy.int32)
    loss = chain(imgs, labels)
    loss.backward()
    assert numpy.isfinite(loss.array)
    assert model.encoder.level1.conv.W.grad is not None
    assert numpy.abs(model.classifier.W.grad).sum() > 0


def test_scores_smaller_than_labels_are_resized(rng):
    score = rng.standard_normal((1, 3, 4, 4)).astype(numpy.float32)
    chain = segmentation_train_chain.SegmentationTrainChain(_Fixed(score))
    loss = chain(None, numpy.zeros((1, 8, 8), numpy.int32))
    assert numpy.isfinite(loss.array)


def test_class_weight_must_be_a_vector():
    with pytest.raises(ValueError, match='class_weight'):
        segmentation_train_chain.SegmentationTrainChain(_Fixed(None), numpy.ones((2, 2)))


def test_enet_class_weight():
    labels = [numpy.array([[0, 0, 1], [-1, 0, 2]]), numpy.array([[2, 2, 2]])]
    weight = segmentation_train_chain.enet_class_weight(labels, 4, c=1.1)
    frequency = numpy.array([3, 1, 4, 0]) / 8
    numpy.testing.assert_allclose(weight, 1 / numpy.log(1.1 + frequency), rtol=1e-6)
    assert weight.dtype == numpy.float32 and weight[3] == weight.max()
    with pytest.raises(ValueError, match='c:'):
        segmentation_train_chain.enet_class_weight(labels, 4, c=1.0)
