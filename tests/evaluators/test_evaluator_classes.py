"""Evaluator classes driven by tiny fake models (perfect and shifted)."""

import numpy
import pytest

from cvzoo.datasets import TupleDataset
from cvzoo.evaluators import (ClassificationEvaluator, DetectionCOCOEvaluator,
                              DetectionVOCEvaluator, InstanceSegmentationCOCOEvaluator,
                              InstanceSegmentationVOCEvaluator, SemanticSegmentationEvaluator)


def _detection_dataset(n=5):
    rng = numpy.random.default_rng(0)
    imgs = [numpy.full((3, 8, 8), i, numpy.float32) for i in range(n)]
    bboxes, labels = [], []
    for _ in range(n):
        xy = rng.uniform(0, 50, (3, 2))
        bboxes.append(numpy.c_[xy, xy + rng.uniform(20, 60, (3, 2))].astype(numpy.float32))
        labels.append(rng.integers(0, 2, 3).astype(numpy.int32))
    return TupleDataset(imgs, bboxes, labels)


class _FakeDetector:
    """Looks the answer up by the image's fill value; ``shift`` moves every box."""

    def __init__(self, dataset, shift=0.0):
        self.dataset = dataset
        self.shift = shift
        self.calls = 0

    def predict(self, imgs):
        self.calls += 1
        bboxes, labels, scores = [], [], []
        for img in imgs:
            _, bbox, label = self.dataset[int(img[0, 0, 0])]
            bboxes.append(bbox + self.shift)
            labels.append(label)
            scores.append(numpy.linspace(0.9, 0.5, len(label)).astype(numpy.float32))
        return bboxes, labels, scores


def test_detection_voc_perfect_and_shifted():
    dataset = _detection_dataset()
    model = _FakeDetector(dataset)
    evaluator = DetectionVOCEvaluator(dataset, model, label_names=('a', 'b'), batchsize=2,
                                      quiet=True)
    report = evaluator()
    assert model.calls == 3
    assert report['map'] == 1.0 and report['ap/a'] == 1.0 and report['ap/b'] == 1.0
    shifted = DetectionVOCEvaluator(dataset, _FakeDetector(dataset, 200.0), quiet=True,
                                    prefix='main/').evaluate()
    assert shifted['main/map'] == 0.0 and 'main/ap/0' in shifted
    assert evaluator.trigger == (1, 'epoch') and isinstance(evaluator.priority, int)


def test_detection_coco_perfect_and_shifted():
    dataset = _detection_dataset()
    report = DetectionCOCOEvaluator(dataset, _FakeDetector(dataset), quiet=True).evaluate()
    assert report['map/iou=0.50:0.95/area=all/max_dets=100'] == pytest.approx(1.0)
    assert 'ap/iou=0.50:0.95/area=all/max_dets=100/1' in report
    report = DetectionCOCOEvaluator(dataset, _FakeDetector(dataset, 4.0), quiet=True)()
    assert 0 < report['map/iou=0.50:0.95/area=all/max_dets=100'] < 1


class _Reporter:
    def __init__(self):
        self.seen = []

    def report(self, values):
        self.seen.append(values)


class _Trainer:
    reporter = _Reporter()


def test_semantic_segmentation_and_trainer_call():
    labels = [numpy.array([[0, 1], [2, -1]], numpy.int32)] * 3
    imgs = [numpy.zeros((3, 2, 2), numpy.float32)] * 3

    class Model:
        def predict(self, imgs):
            return [numpy.array([[0, 1], [2, 2]], numpy.int32) for _ in imgs]

    trainer = _Trainer()
    report = SemanticSegmentationEvaluator(TupleDataset(imgs, labels), Model(),
                                           label_names=('x', 'y', 'z'), quiet=True)(trainer)
    assert report['miou'] == 1.0 and report['iou/z'] == 1.0
    assert trainer.reporter.seen[-1] is report


def test_instance_segmentation_evaluators():
    masks = numpy.zeros((2, 6, 6), bool)
    masks[0, :3, :3] = True
    masks[1, 3:, 3:] = True
    label = numpy.array([0, 1], numpy.int32)
    dataset = TupleDataset([numpy.zeros((3, 6, 6), numpy.float32)] * 2, [masks] * 2,
                           [label] * 2)

    class Model:
        def predict(self, imgs):
            return [masks] * len(imgs), [label] * len(imgs), [numpy.array([.9, .8])] * len(imgs)

    assert InstanceSegmentationVOCEvaluator(dataset, Model(), quiet=True)()['map'] == 1.0
    report = InstanceSegmentationCOCOEvaluator(dataset, Model(), quiet=True)()
    assert report['map/iou=0.50:0.95/area=all/max_dets=100'] == pytest.approx(1.0)


def test_classification_and_iterator_input():
    imgs = [numpy.full((3, 2, 2), k, numpy.float32) for k in range(6)]
    labels = [numpy.int32(k % 3) for k in range(6)]

    class Model:
        def predict(self, imgs):
            return numpy.stack([numpy.eye(3)[int(img[0, 0, 0]) % 3] for img in imgs])

    dataset = TupleDataset(imgs, labels)
    batches = iter([dataset[0:4], dataset[4:6]])
    report = ClassificationEvaluator(batches, Model(), quiet=True)()
    assert report == {'top1': 1.0}
    with pytest.raises(TypeError, match='target'):
        ClassificationEvaluator(dataset, object())
