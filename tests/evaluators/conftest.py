"""Fixtures of the evaluator tests: the pycocotools reference."""

import contextlib
import io

import numpy
import pytest


def _coco_json_bbox(bbox):
    return [float(bbox[0]), float(bbox[1]), float(bbox[2] - bbox[0]), float(bbox[3] - bbox[1])]


def _stats(pred, gt, iou_type='bbox', encode=None):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    n_img = len(gt['label'])
    labels = sorted(set(numpy.concatenate(pred['label'] + gt['label']).tolist()))
    images = [{'id': i + 1, 'width': 400, 'height': 400} for i in range(n_img)]
    annotations, results = [], []
    for i in range(n_img):
        for j, label in enumerate(gt['label'][i]):
            ann = {'id': len(annotations) + 1, 'image_id': i + 1, 'category_id': int(label) + 1,
                   'area': float(gt['area'][i][j]), 'iscrowd': int(gt['crowd'][i][j])}
            if iou_type == 'bbox':
                ann['bbox'] = _coco_json_bbox(gt['bbox'][i][j])
            else:
                ann['segmentation'] = encode(gt['mask'][i][j])
            annotations.append(ann)
        for j, label in enumerate(pred['label'][i]):
            res = {'image_id': i + 1, 'category_id': int(label) + 1,
                   'score': float(pred['score'][i][j])}
            if iou_type == 'bbox':
                res['bbox'] = _coco_json_bbox(pred['bbox'][i][j])
            else:
                res['segmentation'] = encode(pred['mask'][i][j])
            results.append(res)
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {'images': images, 'annotations': annotations,
                           'categories': [{'id': k + 1, 'name': str(k)} for k in labels]}
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(results)
        coco_eval = COCOeval(coco_gt, coco_dt, iou_type)
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return numpy.where(coco_eval.stats == -1, numpy.nan, coco_eval.stats)



@pytest.fixture
def pycocotools_stats():
    """COCOeval's 12 stats (nan for -1) on per-image dicts of arrays; skips without it."""
    pytest.importorskip('pycocotools')
    return _stats
