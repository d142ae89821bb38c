"""Time eval_detection_voc and eval_detection_coco, and pycocotools on the same input.

Synthetic data: N images, each with ~7 ground-truth boxes and 100 detections (the
ground truth jittered plus random boxes), 20 classes. Prints the median of --repeat runs
after one warm-up run. pycocotools (if installed) runs once per repeat as well.

With --keypoints: eval_keypoint_detection_coco against COCOeval(iouType='keypoints') on
COCO val2017's size: N images with 0-6 people of 17 keypoints (some points, some people
unlabelled, a few crowds) and 30 detections each (each person jittered three times at
several strengths, the rest random people). pycocotools gets its COCO objects built
beforehand and is timed for evaluate() + accumulate(); cvzoo for its whole call. Both
warm up once, then run in turns (cvzoo, pycocotools, cvzoo, ...) and the medians, their
ratio and the largest difference of the ten summary numbers are printed.

    python bench/bench_metrics.py [--n-img 5000] [--repeat 3] [--no-pycocotools]
    python bench/bench_metrics.py --keypoints [--n-img 5000] [--repeat 5]
"""

import argparse
import contextlib
import io
import os
import statistics
import time

import numpy

from cvzoo.evaluators import eval_detection_coco, eval_detection_voc
from cvzoo.evaluators.metrics.eval_keypoint_detection_coco import eval_keypoint_detection_coco

N_POINT = 17
KEYPOINT_KEYS = ('iou=0.50:0.95/area=all', 'iou=0.50/area=all', 'iou=0.75/area=all',
                 'iou=0.50:0.95/area=medium', 'iou=0.50:0.95/area=large')


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


def _people(rng, n):
    """(n, 17, 2) points spread over boxes of 16 to 300 pixels, and the boxes."""
    size = rng.uniform(16, 300, n)
    corner = rng.uniform(0, 400, (n, 2))
    point = corner[:, None] + rng.uniform(0, 1, (n, N_POINT, 2)) * size[:, None, None]
    return point, numpy.c_[corner, corner + size[:, None]], size


def make_keypoint_data(n_img, n_pred=30, seed=0):
    """Per-image lists of COCO-like keypoint ground truth and detections (one class)."""
    rng = numpy.random.default_rng(seed)
    data = {k: [] for k in ('pred_point', 'pred_label', 'pred_score', 'gt_point',
                            'gt_visible', 'gt_label', 'gt_bbox', 'gt_area', 'gt_crowd')}
    for _ in range(n_img):
        n_gt = int(rng.integers(0, 7))
        point, bbox, size = _people(rng, n_gt)
        visible = rng.random((n_gt, N_POINT)) < 0.6
        crowd = rng.random(n_gt) < 0.02
        visible[crowd | (rng.random(n_gt) < 0.05)] = False
        point[~visible] = 0
        which = numpy.repeat(numpy.arange(n_gt), 3)
        noise = rng.choice([0.01, 0.04, 0.1], (len(which), 1, 1)) * size[which, None, None]
        copies = point[which] + rng.normal(0, 1, (len(which), N_POINT, 2)) * noise
        others = _people(rng, n_pred - len(which))[0]
        data['gt_point'].append(point.astype(numpy.float32))
        data['gt_visible'].append(visible)
        data['gt_label'].append(numpy.zeros(n_gt, numpy.int32))
        data['gt_bbox'].append(bbox.astype(numpy.float32))
        data['gt_area'].append((size ** 2 * rng.uniform(0.4, 0.9, n_gt)).astype(numpy.float32))
        data['gt_crowd'].append(crowd)
        data['pred_point'].append(numpy.r_[copies, others].astype(numpy.float32))
        data['pred_label'].append(numpy.zeros(n_pred, numpy.int32))
        data['pred_score'].append(rng.random(n_pred).astype(numpy.float32))
    return data


def _keypoint_cocoeval(data):
    """COCOeval('keypoints') with its ground truth and results loaded, not yet run."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    annotations, results = [], []
    for i in range(len(data['gt_point'])):
        for point, visible, box, area, crowd in zip(
                data['gt_point'][i].tolist(), data['gt_visible'][i].tolist(),
                data['gt_bbox'][i].tolist(), data['gt_area'][i].tolist(),
                data['gt_crowd'][i].tolist()):
            keypoints = [v for (x, y), seen in zip(point, visible) for v in (x, y, 2 * seen)]
            annotations.append({'id': len(annotations) + 1, 'image_id': i + 1,
                                'category_id': 1, 'keypoints': keypoints,
                                'num_keypoints': sum(visible), 'iscrowd': int(crowd),
                                'bbox': [box[0], box[1], box[2] - box[0], box[3] - box[1]],
                                'area': area})
        for point, score in zip(data['pred_point'][i].tolist(), data['pred_score'][i].tolist()):
            results.append({'image_id': i + 1, 'category_id': 1, 'score': score,
                            'keypoints': [v for x, y in point for v in (x, y, 1)]})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {'images': [{'id': i + 1} for i in range(len(data['gt_point']))],
                           'annotations': annotations,
                           'categories': [{'id': 1, 'name': 'person'}]}
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(results)
    return lambda: COCOeval(coco_gt, coco_dt, 'keypoints')


def _run_cocoeval(make_eval):
    with contextlib.redirect_stdout(io.StringIO()):
        coco_eval = make_eval()
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return coco_eval.stats


def bench_keypoints(n_img, repeat):
    """Print the interleaved timings of the keypoint metric and of pycocotools."""
    data = make_keypoint_data(n_img)
    inputs = [data[k] for k in ('pred_point', 'pred_label', 'pred_score', 'gt_point',
                                'gt_visible', 'gt_label', 'gt_bbox', 'gt_area', 'gt_crowd')]
    make_eval = _keypoint_cocoeval(data)
    ours, theirs = [], []
    result, stats = eval_keypoint_detection_coco(*inputs), _run_cocoeval(make_eval)  # warm-up
    for _ in range(repeat):
        for fn, times in ((lambda: eval_keypoint_detection_coco(*inputs), ours),
                          (lambda: _run_cocoeval(make_eval), theirs)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    values = [result[f'{m}/{key}/max_dets=20'] for m in ('map', 'mar') for key in KEYPOINT_KEYS]
    n_gt = sum(len(g) for g in data['gt_label'])
    print(f'# {n_img} images, {n_gt} people, 30 detections each; {os.cpu_count()} cores; '
          f'median of {repeat}, interleaved')
    print(f'{"metric":<30} {"seconds":>9} {"AP":>9}')
    print(f'{"eval_keypoint_detection_coco":<30} {statistics.median(ours):9.3f} {values[0]:9.5f}')
    print(f'{"pycocotools COCOeval":<30} {statistics.median(theirs):9.3f} {stats[0]:9.5f}')
    print(f'pycocotools / cvzoo: {statistics.median(theirs) / statistics.median(ours):.1f}x; '
          f'largest difference of the 10 numbers: '
          f'{numpy.nanmax(numpy.abs(numpy.array(values) - stats)):.2e}')


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
    parser.add_argument('--keypoints', action='store_true',
                        help='time the keypoint metric against pycocotools instead')
    args = parser.parse_args()
    if args.keypoints:
        bench_keypoints(args.n_img, args.repeat)
        return
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
