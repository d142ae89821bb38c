"""eval_detection_voc: hand-computed cases and a plain-loop reference."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_detection_voc import (calc_detection_voc_ap,
                                                         calc_detection_voc_prec_rec,
                                                         eval_detection_voc)


def _box(*rows):
    return numpy.array(rows, numpy.float32).reshape(-1, 4)


GT = [_box([0, 0, 10, 10], [20, 20, 40, 40])]
GT_LABEL = [numpy.array([0, 0])]


def test_perfect():
    result = eval_detection_voc(GT, GT_LABEL, [numpy.array([0.9, 0.8])], GT, GT_LABEL)
    numpy.testing.assert_allclose(result['ap'], [1.0])
    assert result['map'] == 1.0


def test_empty_predictions():
    result = eval_detection_voc([_box()], [numpy.zeros(0, int)], [numpy.zeros(0)], GT, GT_LABEL)
    numpy.testing.assert_array_equal(result['ap'], [0.0])


def test_all_wrong_class_and_class_without_gt_is_nan():
    result = eval_detection_voc(GT, [numpy.array([1, 1])], [numpy.array([0.9, 0.8])], GT,
                                GT_LABEL)
    assert result['ap'][0] == 0.0 and numpy.isnan(result['ap'][1])
    assert result['map'] == 0.0


def test_area_and_07_metric_on_a_hand_computed_curve():
    # tp (0.9), fp (0.8), tp (0.7): precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1
    pred = [_box([0, 0, 10, 10], [60, 60, 70, 70], [20, 20, 40, 40])]
    score = [numpy.array([0.9, 0.8, 0.7])]
    label = [numpy.zeros(3, int)]
    area = eval_detection_voc(pred, label, score, GT, GT_LABEL)['map']
    assert area == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)
    eleven = eval_detection_voc(pred, label, score, GT, GT_LABEL, use_07_metric=True)['map']
    assert eleven == pytest.approx((6 * 1 + 5 * 2 / 3) / 11)


@pytest.mark.parametrize('first_is_true, expected', [(True, 1.0), (False, 0.5)],
                         ids=['true_first', 'false_first'])
def test_ties_keep_input_order(first_is_true, expected):
    gt = [_box([0, 0, 10, 10])]
    rows = [[0, 0, 10, 10], [50, 50, 60, 60]]
    pred = [_box(*(rows if first_is_true else rows[::-1]))]
    result = eval_detection_voc(pred, [numpy.zeros(2, int)], [numpy.array([0.5, 0.5])], gt,
                                [numpy.array([0])])
    assert result['map'] == pytest.approx(expected)


def test_duplicate_is_false_positive_and_difficult_is_ignored():
    gt = [_box([0, 0, 10, 10], [20, 20, 30, 30])]
    difficult = [numpy.array([False, True])]
    pred = [_box([0, 0, 10, 10], [0, 0, 10, 9], [20, 20, 30, 30])]
    score = [numpy.array([0.9, 0.8, 0.95])]
    prec, rec = calc_detection_voc_prec_rec(pred, [numpy.zeros(3, int)], score, gt,
                                            [numpy.zeros(2, int)], difficult)
    # order by score: difficult match (ignored), tp, duplicate fp
    numpy.testing.assert_allclose(prec[0], [numpy.nan, 1.0, 0.5])
    numpy.testing.assert_allclose(rec[0], [0.0, 1.0, 1.0])


def test_difficult_only_class_is_nan():
    gt = [_box([0, 0, 10, 10], [20, 20, 30, 30])]
    result = eval_detection_voc(gt, [numpy.array([0, 1])], [numpy.array([0.9, 0.9])], gt,
                                [numpy.array([0, 1])], [numpy.array([False, True])])
    assert result['ap'][0] == 1.0 and numpy.isnan(result['ap'][1])
    assert result['map'] == 1.0


def test_iou_threshold():
    pred = [_box([0, 0, 10, 6])]  # IoU 0.6
    args = (pred, [numpy.array([0])], [numpy.array([1.0])], [_box([0, 0, 10, 10])],
            [numpy.array([0])])
    assert eval_detection_voc(*args, iou_thresh=0.5)['map'] == 1.0
    assert eval_detection_voc(*args, iou_thresh=0.7)['map'] == 0.0


def test_calc_ap_none_gives_nan():
    ap = calc_detection_voc_ap([None, numpy.array([1.0])], [None, numpy.array([1.0])])
    assert numpy.isnan(ap[0]) and ap[1] == 1.0


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match='gt_labels'):
        eval_detection_voc(GT, GT_LABEL, [numpy.array([0.9, 0.8])], GT, [numpy.array([0])])
    with pytest.raises(ValueError, match='iou_thresh'):
        eval_detection_voc(GT, GT_LABEL, [numpy.array([0.9, 0.8])], GT, GT_LABEL, iou_thresh=2)


def _two_images(pred_bbox=None, gt_bbox=None, pred_label=None, gt_label=None):
    """Arguments for two images; the second image's arrays are replaced as given."""
    ok_bbox, ok_label = _box([0, 0, 10, 10]), numpy.array([0])
    return ([ok_bbox, ok_bbox if pred_bbox is None else pred_bbox],
            [ok_label, ok_label if pred_label is None else pred_label],
            [numpy.array([0.9]), numpy.array([0.9])],
            [ok_bbox, ok_bbox if gt_bbox is None else gt_bbox],
            [ok_label, ok_label if gt_label is None else gt_label])


BAD_INPUTS = {
    'nan_pred': ({'pred_bbox': _box([numpy.nan] * 4)}, r'pred_bboxes\[1\].*finite.*image 1'),
    'inf_pred': ({'pred_bbox': _box([0, 0, numpy.inf, 10])}, r'pred_bboxes\[1\].*finite'),
    'nan_gt': ({'gt_bbox': _box([0, numpy.nan, 10, 10])}, r'gt_bboxes\[1\].*finite.*image 1'),
    'five_columns': ({'pred_bbox': numpy.zeros((1, 5), numpy.float32)},
                     r'pred_bboxes\[1\]: expected shape \(R, 4\)'),
    'negative_gt_label': ({'gt_label': numpy.array([-1])}, r'gt_labels\[1\].*>= 0'),
    'negative_pred_label': ({'pred_label': numpy.array([-2])}, r'pred_labels\[1\].*>= 0'),
}


@pytest.mark.parametrize('case', list(BAD_INPUTS))
def test_bad_boxes_and_labels_name_the_argument_and_image(case):
    changes, message = BAD_INPUTS[case]
    with pytest.raises(ValueError, match=message):
        eval_detection_voc(*_two_images(**changes))


def test_all_nan_prediction_does_not_score():
    nan = [_box([numpy.nan] * 4, [numpy.nan] * 4)]
    with pytest.raises(ValueError, match='pred_bboxes'):
        eval_detection_voc(nan, GT_LABEL, [numpy.array([0.9, 0.8])], GT, GT_LABEL)


def _iou(a, b):
    tl = numpy.maximum(a[:, None, :2], b[None, :, :2])
    br = numpy.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = numpy.prod(numpy.clip(br - tl, 0, None), axis=2)
    area_a = numpy.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = numpy.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def _reference_ap(pred_bboxes, pred_labels, pred_scores, gt_bboxes, gt_labels, gt_difficults,
                  n_class):
    """Per-image, per-class loops as the VOC devkit does (stable sort on score)."""
    ap = numpy.full(n_class, numpy.nan)
    for k in range(n_class):
        records, n_pos = [], 0
        for i in range(len(pred_bboxes)):
            gt_sel = gt_labels[i] == k
            gt_box, gt_difficult = gt_bboxes[i][gt_sel], gt_difficults[i][gt_sel]
            n_pos += int((~gt_difficult).sum())
            sel = numpy.flatnonzero(pred_labels[i] == k)
            sel = sel[numpy.argsort(-pred_scores[i][sel], kind='stable')]
            taken = numpy.zeros(len(gt_box), bool)
            for j in sel:
                mark = 0
                if len(gt_box):
                    iou = _iou(pred_bboxes[i][j:j + 1], gt_box)[0]
                    g = int(iou.argmax())
                    if iou[g] >= 0.5:
                        mark = -1 if gt_difficult[g] else int(not taken[g])
                        taken[g] = taken[g] or not gt_difficult[g]
                records.append((-pred_scores[i][j], i, j, mark))
        if n_pos == 0:
            continue
        marks = numpy.array([m for *_, m in sorted(records)])
        tp, fp = numpy.cumsum(marks == 1), numpy.cumsum(marks == 0)
        with numpy.errstate(invalid='ignore'):
            prec = numpy.nan_to_num(tp / (tp + fp))
        rec = tp / n_pos
        total, last_rec = 0.0, 0.0
        for r_index in range(len(rec)):
            if rec[r_index] > last_rec:
                total += (rec[r_index] - last_rec) * prec[r_index:].max()
                last_rec = rec[r_index]
        ap[k] = total
    return ap


@pytest.mark.parametrize('seed', [0, 1, 2], ids=lambda s: f'seed{s}')
def test_matches_plain_loop_reference(seed):
    rng = numpy.random.default_rng(seed)
    data = {name: [] for name in ('pb', 'pl', 'ps', 'gb', 'gl', 'gd')}
    for _ in range(12):
        n, m = int(rng.integers(0, 6)), int(rng.integers(0, 12))
        xy = rng.uniform(0, 100, (n, 2))
        gb = numpy.c_[xy, xy + rng.uniform(5, 50, (n, 2))]
        source = rng.integers(0, max(n, 1), m)
        pb = gb[source] + rng.normal(0, 4, (m, 4)) if n else rng.uniform(0, 100, (m, 4))
        pb = numpy.c_[numpy.minimum(pb[:, :2], pb[:, 2:]), numpy.maximum(pb[:, :2], pb[:, 2:])]
        data['gb'].append(gb)
        data['gl'].append(rng.integers(0, 3, n))
        data['gd'].append(rng.random(n) < 0.2)
        data['pb'].append(pb + numpy.array([0, 0, 1, 1]))
        data['pl'].append(rng.integers(0, 3, m))
        data['ps'].append(numpy.round(rng.random(m), 1))
    ours = eval_detection_voc(data['pb'], data['pl'], data['ps'], data['gb'], data['gl'],
                              data['gd'])['ap']
    expected = _reference_ap(data['pb'], data['pl'], data['ps'], data['gb'], data['gl'],
                             data['gd'], len(ours))
    numpy.testing.assert_allclose(ours, expected, atol=1e-12)
