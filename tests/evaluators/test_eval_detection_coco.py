"""eval_detection_coco: hand-computed cases and agreement with pycocotools."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_detection_coco import eval_detection_coco

MAP = 'map/iou=0.50:0.95/area=all/max_dets=100'
MAP50 = 'map/iou=0.50/area=all/max_dets=100'
SUMMARY_KEYS = [
    'map/iou=0.50:0.95/area=all/max_dets=100', 'map/iou=0.50/area=all/max_dets=100',
    'map/iou=0.75/area=all/max_dets=100', 'map/iou=0.50:0.95/area=small/max_dets=100',
    'map/iou=0.50:0.95/area=medium/max_dets=100', 'map/iou=0.50:0.95/area=large/max_dets=100',
    'mar/iou=0.50:0.95/area=all/max_dets=1', 'mar/iou=0.50:0.95/area=all/max_dets=10',
    'mar/iou=0.50:0.95/area=all/max_dets=100', 'mar/iou=0.50:0.95/area=small/max_dets=100',
    'mar/iou=0.50:0.95/area=medium/max_dets=100', 'mar/iou=0.50:0.95/area=large/max_dets=100',
]


def _arr(rows, dtype=numpy.float32):
    return numpy.array(rows, dtype).reshape(-1, 4) if dtype == numpy.float32 else numpy.array(
        rows, dtype)


def test_keys_and_perfect_score():
    bbox = [_arr([[0, 0, 10, 10], [20, 20, 200, 120]]), _arr([[5, 5, 50, 50]])]
    label = [numpy.array([0, 1]), numpy.array([1])]
    score = [numpy.array([0.9, 0.8]), numpy.array([0.7])]
    result = eval_detection_coco(bbox, label, score, bbox, label)
    assert set(SUMMARY_KEYS) <= set(result)
    assert result[MAP] == pytest.approx(1.0)
    assert result['mar/iou=0.50:0.95/area=all/max_dets=1'] == pytest.approx(1.0)
    assert result['ap/iou=0.50:0.95/area=all/max_dets=100'].shape == (2,)
    # two classes with one small box and one medium (45 x 45) and one large box each
    assert result['map/iou=0.50:0.95/area=large/max_dets=100'] == pytest.approx(1.0)
    numpy.testing.assert_array_equal(result['existent_labels'], [0, 1])


def test_empty_predictions_give_zero():
    gt = [_arr([[0, 0, 10, 10]])]
    result = eval_detection_coco([_arr([])], [numpy.zeros(0, int)], [numpy.zeros(0)], gt,
                                 [numpy.array([0])])
    assert result[MAP] == 0.0
    assert numpy.isnan(result['map/iou=0.50:0.95/area=large/max_dets=100'])


def test_wrong_class_gives_zero_and_nan_for_class_without_gt():
    gt = [_arr([[0, 0, 10, 10]])]
    result = eval_detection_coco(gt, [numpy.array([1])], [numpy.array([0.5])], gt,
                                 [numpy.array([0])])
    assert result[MAP] == 0.0
    ap = result['ap/iou=0.50:0.95/area=all/max_dets=100']
    assert ap[0] == 0.0 and numpy.isnan(ap[1])


def test_half_overlap_counts_only_at_iou_050():
    gt = [_arr([[0, 0, 10, 10]])]
    pred = [_arr([[0, 0, 10, 5.3]])]  # IoU 0.53
    result = eval_detection_coco(pred, [numpy.array([0])], [numpy.array([0.5])], gt,
                                 [numpy.array([0])])
    assert result[MAP50] == pytest.approx(1.0)
    assert result[MAP] == pytest.approx(0.1)  # only the first of ten thresholds


def test_crowd_match_is_neither_true_nor_false():
    gt = [_arr([[0, 0, 10, 10], [50, 50, 150, 150]])]
    crowd = [numpy.array([False, True])]
    pred = [_arr([[0, 0, 10, 10], [60, 60, 80, 80], [100, 100, 120, 120]])]
    result = eval_detection_coco(pred, [numpy.zeros(3, int)], [numpy.array([0.5, 0.9, 0.8])],
                                 gt, [numpy.zeros(2, int)], gt_crowdeds=crowd)
    assert result[MAP] == pytest.approx(1.0)


def test_length_mismatch_names_the_argument():
    with pytest.raises(ValueError, match='pred_labels'):
        eval_detection_coco([_arr([[0, 0, 1, 1]])], [numpy.array([0, 0])], [numpy.array([1.])],
                            [_arr([])], [numpy.zeros(0, int)])


@pytest.mark.parametrize('where, bad, message', [
    ('pred', [[numpy.nan, 0, 1, 1]], r'pred_bboxes\[1\].*finite.*image 1'),
    ('pred', [[0, 0, -numpy.inf, 1]], r'pred_bboxes\[1\].*finite'),
    ('gt', [[0, 0, 1, numpy.nan]], r'gt_bboxes\[1\].*finite.*image 1'),
    ('gt', numpy.zeros((1, 5)), r'gt_bboxes\[1\]: expected shape \(R, 4\)'),
], ids=['nan_pred', 'inf_pred', 'nan_gt', 'five_columns'])
def test_bad_boxes_name_the_argument_and_image(where, bad, message):
    ok = _arr([[0, 0, 1, 1]])
    bad = numpy.asarray(bad, numpy.float32)
    pred = [ok, bad] if where == 'pred' else [ok, ok]
    gt = [ok, bad] if where == 'gt' else [ok, ok]
    labels = [numpy.array([0])] * 2
    with pytest.raises(ValueError, match=message):
        eval_detection_coco(pred, labels, [numpy.array([0.9])] * 2, gt, labels)


def _random_problem(seed, n_img=25, n_class=4, n_pred=30, n_gt=8):
    rng = numpy.random.default_rng(seed)
    pred, gt = {'bbox': [], 'label': [], 'score': []}, {'bbox': [], 'label': [], 'area': [],
                                                        'crowd': []}
    for _ in range(n_img):
        n = int(rng.integers(0, n_gt + 1))
        xy = rng.uniform(0, 300, (n, 2))
        bbox = numpy.c_[xy, xy + rng.uniform(4, 200, (n, 2))]
        label = rng.integers(0, n_class, n)
        gt['bbox'].append(bbox.astype(numpy.float32))
        gt['label'].append(label)
        gt['area'].append(numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1) * rng.uniform(0.5, 1, n))
        gt['crowd'].append(rng.random(n) < 0.15)
        m = int(rng.integers(0, n_pred + 1))
        if n:
            source = rng.integers(0, n, m)
            p = bbox[source] + rng.normal(0, 8, (m, 4))
            p_label = numpy.where(rng.random(m) < 0.8, label[source], rng.integers(0, n_class, m))
        else:
            p = rng.uniform(0, 300, (m, 4))
            p_label = rng.integers(0, n_class, m)
        p = numpy.c_[numpy.minimum(p[:, :2], p[:, 2:]), numpy.maximum(p[:, :2], p[:, 2:]) + 1]
        pred['bbox'].append(p.astype(numpy.float32))
        pred['label'].append(p_label)
        pred['score'].append(numpy.round(rng.random(m), 2))  # rounded: many ties
    return pred, gt


@pytest.mark.reference
@pytest.mark.parametrize('seed', [0, 1, 2, 3], ids=lambda s: f'seed{s}')
def test_agrees_with_pycocotools(seed, pycocotools_stats):
    pred, gt = _random_problem(seed)
    result = eval_detection_coco(pred['bbox'], pred['label'], pred['score'], gt['bbox'],
                                 gt['label'], gt['area'], gt['crowd'])
    ours = numpy.array([result[k] for k in SUMMARY_KEYS])
    numpy.testing.assert_allclose(ours, pycocotools_stats(pred, gt), atol=1e-4)


@pytest.mark.reference
def test_agrees_with_pycocotools_beyond_max_dets(pycocotools_stats):
    # 150 detections of one class per image: the 100 best count, and AR@1/@10 differ
    pred, gt = _random_problem(7, n_img=6, n_class=1, n_pred=150, n_gt=30)
    result = eval_detection_coco(pred['bbox'], pred['label'], pred['score'], gt['bbox'],
                                 gt['label'], gt['area'], gt['crowd'])
    ours = numpy.array([result[k] for k in SUMMARY_KEYS])
    numpy.testing.assert_allclose(ours, pycocotools_stats(pred, gt), atol=1e-4)


def _crowded_image(rng, n_gt, n_pred, n_class=1):
    """One image with ``n_gt`` ground truths (many overlapping) and noisy detections."""
    xy = rng.uniform(0, 2000, (n_gt, 2))
    bbox = numpy.c_[xy, xy + rng.uniform(4, 150, (n_gt, 2))]
    label = rng.integers(0, n_class, n_gt)
    source = rng.integers(0, max(n_gt, 1), n_pred)
    near = bbox[source] if n_gt else rng.uniform(0, 2000, (n_pred, 4))
    p = near + rng.normal(0, 3, (n_pred, 4))
    p = numpy.c_[numpy.minimum(p[:, :2], p[:, 2:]), numpy.maximum(p[:, :2], p[:, 2:]) + 1]
    return {'bbox': bbox.astype(numpy.float32), 'label': label,
            'area': numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1),
            'crowd': rng.random(n_gt) < 0.02,
            'pred_bbox': p.astype(numpy.float32),
            'pred_label': label[source] if n_gt else rng.integers(0, n_class, n_pred),
            'score': numpy.round(rng.random(n_pred), 3)}


def _crowded_problem(seed, sizes, n_class=1):
    rng = numpy.random.default_rng(seed)
    images = [_crowded_image(rng, n_gt, n_pred, n_class) for n_gt, n_pred in sizes]
    pred = {'bbox': [i['pred_bbox'] for i in images], 'label': [i['pred_label'] for i in images],
            'score': [i['score'] for i in images]}
    gt = {k: [i[k] for i in images] for k in ('bbox', 'label', 'area', 'crowd')}
    return pred, gt


def _summary(pred, gt):
    result = eval_detection_coco(pred['bbox'], pred['label'], pred['score'], gt['bbox'],
                                 gt['label'], gt['area'], gt['crowd'])
    return numpy.array([result[k] for k in SUMMARY_KEYS])


@pytest.mark.reference
def test_5000_boxes_in_one_image_agree_with_pycocotools(pycocotools_stats):
    # more than 2,048 ground truths of one class in one image (the old packing's limit)
    pred, gt = _crowded_problem(11, [(5000, 120)])
    numpy.testing.assert_allclose(_summary(pred, gt), pycocotools_stats(pred, gt), atol=1e-6)


@pytest.mark.reference
def test_counts_around_old_limits_agree_with_pycocotools(pycocotools_stats):
    # groups of 2,047 .. 4,097 ground truths beside small ones, two classes
    sizes = [(2047, 40), (2048, 40), (2049, 40), (4097, 60), (5, 8), (0, 3), (30, 20)]
    pred, gt = _crowded_problem(12, sizes, n_class=2)
    numpy.testing.assert_allclose(_summary(pred, gt), pycocotools_stats(pred, gt), atol=1e-6)


def test_chunked_buckets_give_the_same_numbers(monkeypatch):
    from cvzoo.evaluators.metrics import coco_protocol

    pred, gt = _random_problem(5, n_img=40)
    whole = _summary(pred, gt)
    monkeypatch.setattr(coco_protocol, '_CELLS_PER_CHUNK', 1)  # one group per chunk
    numpy.testing.assert_array_equal(_summary(pred, gt), whole)
