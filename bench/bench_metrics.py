"""Time eval_detection_voc and eval_detection_coco, and pycocotools on the same input.

Synthetic data: N images, each with ~7 ground-truth boxes and 100 detections (the
ground truth jittered plus random boxes), 20 classes. Prints the median of --repeat runs
after one warm-up run. pycocotools (if installed) runs once per repeat as well.

    python bench/bench_metrics.py [--n-img 5000] [--repeat 3] [--no-pycocotools]
"""

import argparse
import contextlib
import io
import os
import statistics
import time

import numpy

from cvzoo.evaluators import eval_detection_coco, eval_detection_voc


def make_data(n_img, n_class=20, n_pred=100, seed=0):
    rng = numpy.random.default_rng(seed)
    data = {k: [] for k in ('pred_bbox', 'pred_label', 'pred_score', 'gt_bbox', 'gt_label')}
    for _ in range(n_img):
        n_gt = int(rng.integers(4, 11))
        xy = rng.uniform(0, 400, (n_gt, 2))
        gt_bbox = numpy.c_[xy, xy + rng.uniform(8, 200, (n_gt, 2))]
        gt_label = rng.integers(0, n_class, n_gt)
        xy = rng.uniform(0, 400, (n_pred - n_gt, 2))
        noise = numpy.c_[xy, xy + rng.uniform(8, 200, (n_pred - n_gt, 2))]
        data['gt_bbox'].append(gt_bbox.astype(numpy.float32))
        data['gt_label'].append(gt_label.astype(numpy.int32))
        jitter = gt_bbox + rng.normal(0, 6, gt_bbox.shape)
        data['pred_bbox'].append(numpy.r_[jitter, noise].astype(numpy.float32))
        data['pred_label'].append(numpy.r_[gt_label, rng.integers(0, n_class, len(noise))]
                                  .astype(numpy.int32))
        data['pred_score'].append(rng.random(n_pred).astype(numpy.float32))
    return data


def run_pycocotools(data):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    images, annotations, results = [], [], []
    for i, (gt_bbox, gt_label) in enumerate(zip(data['gt_bbox'], data['gt_label'])):
        images.append({'id': i + 1})
        for box, label in zip(gt_bbox.tolist(), gt_label.tolist()):
            annotations.append({'id': len(annotations) + 1, 'image_id': i + 1,
                                'category_id': label + 1, 'iscrowd': 0,
                                'bbox': [box[0], box[1], box[2] - box[0], box[3] - box[1]],
                                'area': (box[2] - box[0]) * (box[3] - box[1])})
        for box, label, score in zip(data['pred_bbox'][i].tolist(),
                                     data['pred_label'][i].tolist(),
                                     data['pred_score'][i].tolist()):
            results.append({'image_id': i + 1, 'category_id': label + 1, 'score': score,
                            'bbox': [box[0], box[1], box[2] - box[0], box[3] - box[1]]})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {'images': images, 'annotations': annotations,
                           'categories': [{'id': k + 1} for k in range(20)]}
        coco_gt.createIndex()
        coco_eval = COCOeval(coco_gt, coco_gt.loadRes(results), 'bbox')
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return coco_eval.stats


def timed(fn, repeat, warm_up=True):
    if warm_up:
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n-img', type=int, default=5000)
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--no-pycocotools', action='store_true')
    args = parser.parse_args()
    data = make_data(args.n_img)
    inputs = (data['pred_bbox'], data['pred_label'], data['pred_score'], data['gt_bbox'],
              data['gt_label'])
    rows = []
    t, result = timed(lambda: eval_detection_voc(*inputs), args.repeat)
    rows.append(('eval_detection_voc', t, result['map']))
    t, result = timed(lambda: eval_detection_voc(*inputs, use_07_metric=True), args.repeat)
    rows.append(('eval_detection_voc (07)', t, result['map']))
    t, result = timed(lambda: eval_detection_coco(*inputs), args.repeat)
    coco_time = t
    rows.append(('eval_detection_coco', t, result['map/iou=0.50:0.95/area=all/max_dets=100']))
    if not args.no_pycocotools:
        try:
            t, stats = timed(lambda: run_pycocotools(data), args.repeat, warm_up=False)
            rows.append(('pycocotools COCOeval', t, stats[0]))
        except ImportError:
            pass
    print(f'# {args.n_img} images x 100 detections, ~7 gt boxes each; '
          f'{os.cpu_count()} cores; median of {args.repeat}')
    print(f'{"metric":<26} {"seconds":>9} {"value":>10}')
    for name, seconds, value in rows:
        print(f'{name:<26} {seconds:9.2f} {value:10.5f}')
    if len(rows) == 4:
        print(f'pycocotools / cvzoo (COCO): {rows[3][1] / coco_time:.1f}x')


if __name__ == '__main__':
    main()
