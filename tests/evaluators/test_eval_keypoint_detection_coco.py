"""eval_keypoint_detection_coco: hand-made cases and pycocotools' COCOeval('keypoints')."""

import contextlib
import io

import numpy
import pytest

from cvzoo.evaluators.metrics import coco_protocol
from cvzoo.evaluators.metrics.eval_keypoint_detection_coco import (
    COCO_KEYPOINT_SIGMAS, eval_keypoint_detection_coco,
)

K = 17
KEYS = [f'{metric}/iou={iou}/area={area}/max_dets=20'
        for metric, iou, area, _ in coco_protocol.KEYPOINTS.summary]


def _person(rng, x, y, size):
    """(K, 2) points spread over a size x size box at (x, y)."""
    return numpy.stack([x + rng.uniform(0, size, K), y + rng.uniform(0, size, K)], axis=1)


def _random_problem(seed, n_img=8, n_class=2):
    """Images with people of all sizes, crowds, people without labelled points, images
    without people, more than 20 detections on some images and tied scores."""
    rng = numpy.random.RandomState(seed)
    gt = {key: [] for key in ('point', 'visible', 'label', 'bbox', 'area', 'crowd')}
    pred = {key: [] for key in ('point', 'label', 'score')}
    for i in range(n_img):
        n_gt = 0 if i % 4 == 3 else rng.randint(1, 7)
        size = rng.choice([20.0, 60.0, 150.0], n_gt)
        corner = rng.uniform(0, 250, (n_gt, 2))
        point = numpy.stack([_person(rng, x, y, s) for (x, y), s in zip(corner, size)]) \
            if n_gt else numpy.zeros((0, K, 2))
        visible = rng.uniform(size=(n_gt, K)) < 0.7
        visible[rng.uniform(size=n_gt) < 0.2] = False  # some people have no labelled point
        crowd = rng.uniform(size=n_gt) < 0.15
        visible[crowd] = False  # COCO's crowds carry no keypoints
        point[~visible] = 0
        bbox = numpy.concatenate([corner, corner + size[:, None]], axis=1)
        gt['point'].append(point.astype(numpy.float32))
        gt['visible'].append(visible)
        gt['label'].append(rng.randint(0, n_class, n_gt).astype(numpy.int32))
        # near copies of the ground truth (noise of several sizes), then random people
        gt['bbox'].append(bbox.astype(numpy.float32))
        gt['area'].append((size ** 2 * rng.uniform(0.4, 0.9, n_gt)).astype(numpy.float32))
        gt['crowd'].append(crowd)
        n_pred = rng.choice([0, 3, 12, 30]) if i % 4 != 3 else 25
        base = numpy.where(visible[..., None], point, _person(rng, 0, 0, 100)) \
            if n_gt else numpy.zeros((0, K, 2))
        which = rng.randint(0, max(n_gt, 1), (n_pred + 1) // 2 if n_gt else 0)
        copies = base[which] if n_gt else numpy.zeros((0, K, 2))
        spread = size[which] if n_gt else numpy.zeros(0)
        copies = copies + rng.normal(0, 1, copies.shape) * (
            spread[:, None, None] * rng.choice([0.01, 0.04, 0.1], (len(copies), 1, 1)))
        others = numpy.array([_person(rng, *rng.uniform(0, 250, 2), rng.uniform(10, 150))
                              for _ in range(n_pred - len(copies))]).reshape(-1, K, 2)
        pred['point'].append(numpy.concatenate([copies, others]).astype(numpy.float32))
        pred['label'].append(numpy.r_[gt['label'][-1][which],
                                      rng.randint(0, n_class, len(others))].astype(numpy.int32))
        score = rng.uniform(size=n_pred) * 0.7 + 0.3 * (numpy.arange(n_pred) < len(copies))
        pred['score'].append(numpy.round(score, 1).astype(numpy.float32))  # with ties
    return pred, gt


def _pycocotools_stats(pred, gt):
    """COCOeval('keypoints')'s 10 stats (nan for -1)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    n_img = len(gt['label'])
    labels = sorted(set(numpy.concatenate(pred['label'] + gt['label']).tolist()))
    annotations, results = [], []
    for i in range(n_img):
        for j, label in enumerate(gt['label'][i].tolist()):
            triples = numpy.concatenate([gt['point'][i][j].astype(numpy.float64),
                                         2.0 * gt['visible'][i][j][:, None]], axis=1)
            x0, y0, x1, y1 = gt['bbox'][i][j].astype(numpy.float64).tolist()
            annotations.append({
                'id': len(annotations) + 1, 'image_id': i + 1, 'category_id': label + 1,
                'keypoints': triples.ravel().tolist(),
                'num_keypoints': int(gt['visible'][i][j].sum()),
                'bbox': [x0, y0, x1 - x0, y1 - y0], 'area': float(gt['area'][i][j]),
                'iscrowd': int(gt['crowd'][i][j])})
        for j, label in enumerate(pred['label'][i].tolist()):
            triples = numpy.concatenate([pred['point'][i][j].astype(numpy.float64),
                                         numpy.ones((K, 1))], axis=1)
            results.append({'image_id': i + 1, 'category_id': label + 1,
                            'keypoints': triples.ravel().tolist(),
                            'score': float(pred['score'][i][j])})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {'images': [{'id': i + 1} for i in range(n_img)],
                           'annotations': annotations,
                           'categories': [{'id': k + 1, 'name': str(k)} for k in labels]}
        coco_gt.createIndex()
        coco_eval = COCOeval(coco_gt, coco_gt.loadRes(results), 'keypoints')
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return numpy.where(coco_eval.stats == -1, numpy.nan, coco_eval.stats)


def _summary(pred, gt, **kwargs):
    result = eval_keypoint_detection_coco(
        pred['point'], pred['label'], pred['score'], gt['point'], gt['visible'], gt['label'],
        gt['bbox'], gt['area'], gt['crowd'], **kwargs)
    return numpy.array([result['m' + key] for key in KEYS])


@pytest.mark.reference
@pytest.mark.parametrize('seed', [0, 1, 2, 3])
def test_equals_pycocotools(seed):
    pytest.importorskip('pycocotools')
    pred, gt = _random_problem(seed)
    assert max(len(s) for s in pred['score']) > 20
    assert any(len(g) == 0 and len(p) for g, p in zip(gt['label'], pred['label']))
    ours, theirs = _summary(pred, gt), _pycocotools_stats(pred, gt)
    assert numpy.isfinite(theirs).sum() >= 8  # the data reaches most of the summary
    numpy.testing.assert_allclose(ours, theirs, atol=1e-4)


@pytest.mark.reference
def test_many_images_one_class_equals_pycocotools():
    pytest.importorskip('pycocotools')
    pred, gt = _random_problem(7, n_img=40, n_class=1)
    numpy.testing.assert_allclose(_summary(pred, gt), _pycocotools_stats(pred, gt), atol=1e-4)


def _one_person():
    point = numpy.array([[[10 + 3 * k, 20 + 5 * k] for k in range(K)]], numpy.float32)
    return point, numpy.ones((1, K), bool), numpy.array([0], numpy.int32)


def test_perfect_and_all_wrong():
    point, visible, label = _one_person()
    score = [numpy.array([0.9], numpy.float32)]
    area = [numpy.array([50.0 ** 2])]
    result = eval_keypoint_detection_coco([point], [label], score, [point], [visible],
                                          [label], gt_areas=area)
    assert result['map/iou=0.50:0.95/area=all/max_dets=20'] == pytest.approx(1.0)
    assert result['mar/iou=0.50:0.95/area=medium/max_dets=20'] == pytest.approx(1.0)
    assert numpy.isnan(result['map/iou=0.50:0.95/area=large/max_dets=20'])  # no large gt
    assert result['existent_labels'].tolist() == [0]
    far = point + 200
    result = eval_keypoint_detection_coco([far], [label], score, [point], [visible], [label],
                                          gt_areas=area)
    assert result['map/iou=0.50:0.95/area=all/max_dets=20'] == 0.0


def test_hidden_points_do_not_count():
    point, visible, label = _one_person()
    pred = point.copy()
    pred[0, 5:] += 500  # wrong where the ground truth is not labelled
    visible[0, 5:] = False
    args = ([pred], [label], [numpy.array([0.9])], [point], [visible], [label])
    assert eval_keypoint_detection_coco(*args)['map/iou=0.50:0.95/area=all/max_dets=20'] \
        == pytest.approx(1.0)
    visible[0, 5:] = True
    assert eval_keypoint_detection_coco(*args)['map/iou=0.50:0.95/area=all/max_dets=20'] \
        < 0.5


def test_crowd_and_unlabelled_people_are_ignored():
    point, visible, label = _one_person()
    # the only ground truth is a crowd: nothing to find, nan like pycocotools' -1
    result = eval_keypoint_detection_coco(
        [point], [label], [numpy.array([0.9])], [point], [visible], [label],
        gt_crowdeds=[numpy.array([True])])
    assert numpy.isnan(result['map/iou=0.50:0.95/area=all/max_dets=20'])
    # a person without labelled points next to one with: a detection on the first
    # (through its box) is neither true nor false
    gt_point = numpy.concatenate([point, point + 300])
    gt_visible = numpy.array([[True] * K, [False] * K])
    bbox = numpy.array([[0, 0, 70, 110], [290, 300, 380, 420]], numpy.float32)
    pred = numpy.concatenate([point, point + 300])
    kwargs = {'gt_bboxes': [bbox]}
    result = eval_keypoint_detection_coco(
        [pred], [numpy.zeros(2, numpy.int32)], [numpy.array([0.5, 0.9])], [gt_point],
        [gt_visible], [numpy.zeros(2, numpy.int32)], **kwargs)
    assert result['map/iou=0.50:0.95/area=all/max_dets=20'] == pytest.approx(1.0)


def test_default_sigmas_are_pycocotools_kpt_oks_sigmas():
    pytest.importorskip('pycocotools')
    from pycocotools.cocoeval import Params

    numpy.testing.assert_array_equal(COCO_KEYPOINT_SIGMAS,
                                     Params(iouType='keypoints').kpt_oks_sigmas)


@pytest.mark.parametrize('change, name', [
    (lambda a: a.update(pred_points=[numpy.zeros((1, 5, 2))]), 'pred_points'),
    (lambda a: a.update(gt_points=[numpy.zeros((1, K))]), 'gt_points'),
    (lambda a: a.update(gt_visibles=[numpy.ones((2, K), bool)]), 'gt_visibles'),
    (lambda a: a.update(pred_scores=[]), 'pred_scores'),
    (lambda a: a.update(pred_labels=[numpy.array([-1])]), 'pred_labels'),
    (lambda a: a.update(gt_bboxes=[numpy.zeros((1, 3))]), 'gt_bboxes'),
    (lambda a: a.update(gt_areas=[numpy.zeros(2)]), 'gt_areas'),
    (lambda a: a['pred_points'][0].__setitem__((0, 0, 0), numpy.nan), 'pred_points'),
], ids=['pred-k', 'gt-2d', 'visible-rows', 'scores-images', 'negative-label', 'bbox-shape',
        'area-rows', 'nan-point'])
def test_bad_arguments_are_named(change, name):
    point, visible, label = _one_person()
    args = {'pred_points': [point.copy()], 'pred_labels': [label],
            'pred_scores': [numpy.array([0.9])], 'gt_points': [point], 'gt_visibles': [visible],
            'gt_labels': [label]}
    change(args)
    with pytest.raises(ValueError, match=name):
        eval_keypoint_detection_coco(**args)


def test_empty_images_and_other_keypoint_sets():
    empty = [numpy.zeros((0, 3, 2), numpy.float32)]
    result = eval_keypoint_detection_coco(empty, [numpy.zeros(0, numpy.int32)],
                                          [numpy.zeros(0)], empty, [numpy.zeros((0, 3), bool)],
                                          [numpy.zeros(0, numpy.int32)], sigmas=[0.1] * 3)
    assert numpy.isnan(result['map/iou=0.50:0.95/area=all/max_dets=20'])
    assert result['existent_labels'].tolist() == []


def test_chunks_give_the_same_numbers(monkeypatch):
    pred, gt = _random_problem(5, n_img=12)
    whole = _summary(pred, gt)
    monkeypatch.setattr(coco_protocol, '_CELLS_PER_CHUNK', 1)  # one group per chunk
    numpy.testing.assert_array_equal(_summary(pred, gt), whole)
