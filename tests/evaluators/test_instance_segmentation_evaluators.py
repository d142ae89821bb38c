"""InstanceSegmentationVOCEvaluator and InstanceSegmentationCOCOEvaluator on a fake
segmenter: the same numbers as the metrics on dense masks, masks kept as runs, the
training-extension interface."""

import numpy
import pytest

from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.datasets.tuple_dataset import TupleDataset
from cvzoo.evaluators import (InstanceSegmentationCOCOEvaluator,
                              InstanceSegmentationVOCEvaluator, RunLengthMasks,
                              eval_instance_segmentation_coco, eval_instance_segmentation_voc)

from tests.helpers.fake_instance_segmenter import (FakeInstanceSegmenter, flat_image,
                                                   random_instances)

SIZES = [(30, 40), (25, 25), (40, 20), (33, 31), (12, 50)]


def _problem(seed=0):
    """Images, ground truth and noisy predictions of each image (some masks of the
    ground truth with pixels flipped, some random)."""
    rng = numpy.random.default_rng(seed)
    imgs, gt, answers = [], {'mask': [], 'label': [], 'crowd': [], 'area': []}, {}
    for level, size in enumerate(SIZES):
        masks, labels, _ = random_instances(rng, int(rng.integers(1, 5)), size, 3)
        gt['mask'].append(masks)
        gt['label'].append(labels)
        gt['crowd'].append(rng.random(len(masks)) < 0.2)
        gt['area'].append(masks.sum(axis=(1, 2)).astype(numpy.float32) + 5)
        source = rng.integers(0, len(masks), 4)
        noisy = masks[source] ^ (rng.random((4,) + size) < 0.03)
        extra, extra_labels, _ = random_instances(rng, 2, size, 3)
        scores = numpy.round(rng.random(6), 2).astype(numpy.float32)
        answers[level] = (numpy.concatenate([noisy, extra]),
                          numpy.r_[labels[source], extra_labels].astype(numpy.int32), scores)
        imgs.append(flat_image(level, size))
    return imgs, gt, answers


def _pred(answers):
    return [[answers[level][k] for level in range(len(SIZES))] for k in range(3)]


@pytest.mark.parametrize('use_07_metric', [False, True], ids=['area', '07'])
def test_voc_evaluator_equals_the_metric_at_each_threshold(use_07_metric):
    imgs, gt, answers = _problem()
    dataset = TupleDataset(imgs, gt['mask'], gt['label'])
    evaluator = InstanceSegmentationVOCEvaluator(
        dataset, FakeInstanceSegmenter(answers), iou_thresh=(0.5, 0.7),
        use_07_metric=use_07_metric, label_names=('a', 'b', 'c'), batchsize=2, quiet=True)
    report = evaluator.evaluate()
    assert set(report) == {f'{m}/iou={t}{n}' for t in ('0.50', '0.70')
                           for m, n in (('map', ''), ('ap', '/a'), ('ap', '/b'), ('ap', '/c'))}
    for thresh in (0.5, 0.7):
        expected = eval_instance_segmentation_voc(*_pred(answers), gt['mask'], gt['label'],
                                                  iou_thresh=thresh,
                                                  use_07_metric=use_07_metric)
        assert report[f'map/iou={thresh:.2f}'] == pytest.approx(expected['map'], abs=1e-12)
        assert report[f'ap/iou={thresh:.2f}/b'] == pytest.approx(expected['ap'][1], nan_ok=True)
    assert report['map/iou=0.50'] != report['map/iou=0.70']  # the thresholds matter here
    single = InstanceSegmentationVOCEvaluator(dataset, FakeInstanceSegmenter(answers),
                                              quiet=True).evaluate()
    assert set(single) == {'map', 'ap/0', 'ap/1', 'ap/2'}


def test_coco_evaluator_equals_the_metric_with_crowds_and_areas():
    imgs, gt, answers = _problem(1)
    dataset = TupleDataset(imgs, gt['mask'], gt['label'], gt['crowd'], gt['area'])
    evaluator = InstanceSegmentationCOCOEvaluator(
        dataset, FakeInstanceSegmenter(answers), label_names=('a', 'b', 'c'), batchsize=3,
        with_crowded=True, with_area=True, quiet=True)
    report = evaluator.evaluate()
    expected = eval_instance_segmentation_coco(*_pred(answers), gt['mask'], gt['label'],
                                               gt['area'], gt['crowd'])
    keys = [k for k in expected if k.startswith(('map/', 'mar/'))]
    assert len(keys) == 12
    for key in keys:
        assert report[key] == pytest.approx(expected[key], nan_ok=True), key
    per_class = 'ap/iou=0.50:0.95/area=all/max_dets=100'
    assert report[f'{per_class}/c'] == pytest.approx(expected[per_class][2], nan_ok=True)
    plain = InstanceSegmentationCOCOEvaluator(
        TupleDataset(imgs, gt['mask'], gt['label']), FakeInstanceSegmenter(answers),
        quiet=True).evaluate()
    assert plain[keys[0]] == pytest.approx(eval_instance_segmentation_coco(
        *_pred(answers), gt['mask'], gt['label'])[keys[0]])


def test_masks_are_kept_as_runs_until_the_metric():
    imgs, gt, answers = _problem(2)
    evaluator = InstanceSegmentationCOCOEvaluator(
        TupleDataset(imgs, gt['mask'], gt['label']), FakeInstanceSegmenter(answers),
        batchsize=2, quiet=True)
    outputs, truths = evaluator.run()
    assert all(isinstance(m, RunLengthMasks) for m in outputs[0] + truths[0])
    for runs, masks in zip(truths[0], gt['mask']):
        numpy.testing.assert_array_equal(runs.to_masks(masks.shape[1:]), masks)


class _Reporter:
    def __init__(self):
        self.seen = []

    def report(self, values):
        self.seen.append(values)


class _Trainer:
    def __init__(self):
        self.reporter = _Reporter()


def test_training_extension_reports_with_prefix_from_an_iterator():
    imgs, gt, answers = _problem(3)
    iterator = SerialIterator(TupleDataset(imgs, gt['mask'], gt['label']), 2, repeat=False,
                              shuffle=False)
    model = FakeInstanceSegmenter(answers)
    evaluator = InstanceSegmentationVOCEvaluator(iterator, model, prefix='validation/main/',
                                                 quiet=True)
    assert evaluator.trigger == (1, 'epoch') and evaluator.priority > 0
    trainer = _Trainer()
    first = evaluator(trainer)
    assert trainer.reporter.seen == [first] and 'validation/main/map' in first
    assert evaluator(trainer) == first  # the iterator is reset before each run
    assert model.calls == 6


def test_bad_iou_thresh_names_the_argument():
    with pytest.raises(ValueError, match='iou_thresh'):
        InstanceSegmentationVOCEvaluator([], FakeInstanceSegmenter(), iou_thresh=(0.5, 1.5))
    with pytest.raises(ValueError, match='iou_thresh'):
        InstanceSegmentationVOCEvaluator([], FakeInstanceSegmenter(), iou_thresh=())
