"""KeypointDetectionCOCOEvaluator on a fake keypoint detector: the metric's numbers,
crowds and areas passed through, the training-extension interface."""

import numpy
import pytest

from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.datasets.tuple_dataset import TupleDataset
from cvzoo.evaluators import KeypointDetectionCOCOEvaluator, eval_keypoint_detection_coco
from tests.helpers.fake_instance_segmenter import flat_image
from tests.helpers.fake_keypoint_detector import FakeKeypointDetector, random_people

SIZES = [(300, 400), (250, 250), (400, 200), (330, 310)]
SUMMARY = 'map/iou=0.50:0.95/area=all/max_dets=20'


def _problem(seed=0):
    """Images, ground truth (two classes) and the fake model's answers: jittered people
    of the ground truth and random ones."""
    rng = numpy.random.default_rng(seed)
    imgs, answers = [], {}
    gt = {k: [] for k in ('point', 'visible', 'label', 'bbox', 'crowd', 'area')}
    for level, size in enumerate(SIZES):
        points, visibles, labels, bboxes = random_people(rng, 4, size, n_fg_class=2)
        for key, value in zip(('point', 'visible', 'label', 'bbox'),
                              (points, visibles, labels, bboxes)):
            gt[key].append(value)
        gt['crowd'].append(numpy.array([False, False, False, level == 1]))
        gt['area'].append(numpy.prod(bboxes[:, 2:] - bboxes[:, :2], axis=1) * 0.3)
        source = rng.integers(0, 4, 5)
        noisy = points[source] + rng.normal(0, 4, (5, 17, 2))
        extra = random_people(rng, 2, size)[0]
        answers[level] = (numpy.concatenate([noisy, extra]),
                          numpy.r_[labels[source], rng.integers(0, 2, 2)],
                          numpy.round(rng.random(7), 2))
        imgs.append(flat_image(level, size))
    return imgs, gt, answers


def _expected(answers, gt, with_extras=True):
    pred = [[numpy.asarray(answers[level][k]) for level in range(len(SIZES))]
            for k in range(3)]
    extras = (gt['area'], gt['crowd']) if with_extras else (None, None)
    return eval_keypoint_detection_coco(*pred, gt['point'], gt['visible'], gt['label'],
                                        gt['bbox'], *extras)


def test_equals_the_metric_with_crowds_and_areas():
    imgs, gt, answers = _problem()
    dataset = TupleDataset(imgs, gt['point'], gt['visible'], gt['label'], gt['bbox'],
                           gt['crowd'], gt['area'])
    evaluator = KeypointDetectionCOCOEvaluator(
        dataset, FakeKeypointDetector(answers), label_names=('a', 'b'), batchsize=3,
        with_crowded=True, with_area=True, quiet=True)
    report = evaluator.evaluate()
    expected = _expected(answers, gt)
    keys = [k for k in expected if k.startswith(('map/', 'mar/'))]
    assert len(keys) == 10 and all('max_dets=20' in k for k in keys)
    assert set(report) == set(keys) | {'ap/iou=0.50:0.95/area=all/max_dets=20/a',
                                       'ap/iou=0.50:0.95/area=all/max_dets=20/b'}
    for key in keys:
        assert report[key] == pytest.approx(expected[key], nan_ok=True), key
    assert 0 < report[SUMMARY] < 1
    assert report['ap/iou=0.50:0.95/area=all/max_dets=20/b'] == pytest.approx(
        expected['ap/iou=0.50:0.95/area=all/max_dets=20'][1])
    # without the extras the boxes' areas and no crowds: other numbers
    plain = KeypointDetectionCOCOEvaluator(
        TupleDataset(imgs, gt['point'], gt['visible'], gt['label'], gt['bbox']),
        FakeKeypointDetector(answers), quiet=True).evaluate()
    assert plain[SUMMARY] == pytest.approx(_expected(answers, gt, False)[SUMMARY])
    assert plain[SUMMARY] != pytest.approx(report[SUMMARY])


def test_perfect_points_and_iterator_and_extension():
    imgs, gt, _ = _problem(1)
    answers = {level: (gt['point'][level], gt['label'][level], numpy.ones(4))
               for level in range(len(SIZES))}
    dataset = TupleDataset(imgs, gt['point'], gt['visible'], gt['label'], gt['bbox'])
    iterator = SerialIterator(dataset, 2, repeat=False, shuffle=False)
    model = FakeKeypointDetector(answers)
    evaluator = KeypointDetectionCOCOEvaluator(iterator, model, prefix='validation/main/',
                                               quiet=True)
    report = evaluator()  # as a training extension, with no trainer
    assert report['validation/main/' + SUMMARY] == pytest.approx(1.0)
    assert evaluator()['validation/main/' + SUMMARY] == pytest.approx(1.0)  # reset
    assert model.calls == 4


def test_predict_with_other_fields_is_named():
    class ThreeFields:
        def predict(self, imgs):
            return [], [], []

    imgs, gt, _ = _problem()
    dataset = TupleDataset(imgs, gt['point'], gt['visible'], gt['label'], gt['bbox'])
    with pytest.raises(ValueError, match='target'):
        KeypointDetectionCOCOEvaluator(dataset, ThreeFields(), quiet=True).evaluate()


def test_a_small_keypoint_rcnn_runs_through_the_evaluator():
    from cvzoo.testing.small_models import build_small_model

    _, model = build_small_model('keypointrcnn_resnet50_fpn')  # random weights, 5 points
    model.use_preset('evaluate')
    rng = numpy.random.default_rng(0)
    imgs = [rng.uniform(0, 255, (3, 60, 80)).astype(numpy.float32) for _ in range(2)]
    points = [rng.uniform(0, 60, (2, 5, 2)).astype(numpy.float32) for _ in range(2)]
    bbox = numpy.array([[0, 0, 40, 40], [10, 10, 60, 50]], numpy.float32)
    dataset = TupleDataset(imgs, points, [numpy.ones((2, 5), bool)] * 2,
                           [numpy.zeros(2, numpy.int32)] * 2, [bbox] * 2)
    report = KeypointDetectionCOCOEvaluator(dataset, model, sigmas=[0.1] * 5,
                                            quiet=True).evaluate()
    assert 0 <= report[SUMMARY] <= 1  # detections of random weights were evaluated
