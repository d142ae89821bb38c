"""Time eval_instance_segmentation_coco against pycocotools' segm evaluate + accumulate.

Synthetic problem of COCO val2017's size by default: N images of 480x640, each with 4-10
ground-truth masks of 80 classes and 100 predicted masks (each ground truth jittered
five times, the rest random), all axis-aligned rectangles (a rectangle spans one run per
column, as a convex object does). Both sides get the masks already encoded (cvzoo:
RunLengthMasks per image, pycocotools: compressed RLE), so the timings are of the
protocol alone: cvzoo's whole eval_instance_segmentation_coco call against COCOeval's
evaluate() + accumulate(). Prints the median of --repeat runs after one warm-up run (one
run of each when --repeat is 1), the ratio, and the largest difference of the twelve
summary numbers.

    OPENBLAS_NUM_THREADS=1 python bench/bench_mask_metrics.py [--n-img 5000] [--repeat 1]
"""

import argparse
import contextlib
import io
import os
import pathlib
import statistics
import sys
import time

import numpy

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.evaluators import RunLengthMasks, eval_instance_segmentation_coco  # noqa: E402

SIZE = (480, 640)
N_CLASS = 80
N_PRED = 100
COPIES = 5  # jittered predictions per ground truth


def _rectangles(rng, n, size):
    """(n, 4) int64 (x_min, y_min, x_max, y_max), at least 2 pixels a side."""
    H, W = size
    x0, y0 = rng.integers(0, W - 8, n), rng.integers(0, H - 8, n)
    width = numpy.minimum(rng.integers(2, 240, n), W - x0)
    height = numpy.minimum(rng.integers(2, 240, n), H - y0)
    return numpy.stack([x0, y0, x0 + width, y0 + height], axis=1)


def _jitter(rng, bbox, size):
    H, W = size
    moved = bbox + rng.normal(0, 0.08, bbox.shape) * (bbox[:, 2:] - bbox[:, :2]).repeat(2, 1)
    moved = numpy.rint(moved).astype(numpy.int64)
    moved[:, 0::2] = numpy.clip(moved[:, 0::2], 0, W)
    moved[:, 1::2] = numpy.clip(moved[:, 1::2], 0, H)
    moved[:, 2] = numpy.maximum(moved[:, 2], moved[:, 0] + 1)
    moved[:, 3] = numpy.maximum(moved[:, 3], moved[:, 1] + 1)
    moved[:, 0] = numpy.minimum(moved[:, 0], W - 1)
    moved[:, 1] = numpy.minimum(moved[:, 1], H - 1)
    moved[:, 2:] = numpy.minimum(moved[:, 2:], [W, H])
    return moved


def rectangle_runs(bbox, size):
    """RunLengthMasks of rectangles: one run per column, ``x * H + y_min .. y_max``."""
    H, _ = size
    width = bbox[:, 2] - bbox[:, 0]
    mask = numpy.repeat(numpy.arange(len(bbox)), width)
    column = bbox[mask, 0] + numpy.arange(width.sum()) - numpy.repeat(
        numpy.cumsum(width) - width, width)
    return RunLengthMasks(column * H + bbox[mask, 1], column * H + bbox[mask, 3],
                          numpy.r_[0, numpy.cumsum(width)], numpy.full(len(bbox), H),
                          size=size)


def make_problem(n_img, seed=0):
    """Per image: gt boxes, labels; predicted boxes, labels, scores (all rectangles)."""
    rng = numpy.random.default_rng(seed)
    problem = {k: [] for k in ('gt_bbox', 'gt_label', 'pred_bbox', 'pred_label',
                               'pred_score')}
    for _ in range(n_img):
        n_gt = int(rng.integers(4, 11))
        gt_bbox = _rectangles(rng, n_gt, SIZE)
        gt_label = rng.integers(0, N_CLASS, n_gt)
        copies = _jitter(rng, numpy.repeat(gt_bbox, COPIES, axis=0), SIZE)
        n_random = N_PRED - len(copies)
        pred_bbox = numpy.r_[copies, _rectangles(rng, n_random, SIZE)]
        pred_label = numpy.r_[numpy.repeat(gt_label, COPIES),
                              numpy.where(rng.random(n_random) < 0.5,
                                          rng.choice(gt_label, n_random),
                                          rng.integers(0, N_CLASS, n_random))]
        problem['gt_bbox'].append(gt_bbox)
        problem['gt_label'].append(gt_label.astype(numpy.int32))
        problem['pred_bbox'].append(pred_bbox)
        problem['pred_label'].append(pred_label.astype(numpy.int32))
        problem['pred_score'].append(numpy.round(rng.random(N_PRED), 3).astype(numpy.float32))
    return problem


def _coco_rle(runs, k, mask_api):
    """Compressed COCO RLE of mask ``k`` of a RunLengthMasks."""
    H, W = runs.size
    sl = slice(runs.offsets[k], runs.offsets[k + 1])
    boundaries = numpy.c_[runs.starts[sl], runs.ends[sl]].ravel()
    counts = numpy.diff(numpy.r_[0, boundaries, H * W]).tolist()
    return mask_api.frPyObjects({'size': [H, W], 'counts': counts}, H, W)


def pycocotools_inputs(problem, pred_runs, gt_runs):
    """A COCO ground truth and its loaded results (not timed)."""
    from pycocotools import mask as mask_api
    from pycocotools.coco import COCO

    images, annotations, results = [], [], []
    for i, (runs, labels) in enumerate(zip(gt_runs, problem['gt_label'])):
        images.append({'id': i + 1, 'height': SIZE[0], 'width': SIZE[1]})
        for k, label in enumerate(labels.tolist()):
            annotations.append({'id': len(annotations) + 1, 'image_id': i + 1,
                                'category_id': label + 1, 'iscrowd': 0,
                                'area': float(runs.area[k]),
                                'segmentation': _coco_rle(runs, k, mask_api)})
        for k, (label, score) in enumerate(zip(problem['pred_label'][i].tolist(),
                                               problem['pred_score'][i].tolist())):
            results.append({'image_id': i + 1, 'category_id': label + 1, 'score': score,
                            'segmentation': _coco_rle(pred_runs[i], k, mask_api)})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {'images': images, 'annotations': annotations,
                           'categories': [{'id': c + 1} for c in range(N_CLASS)]}
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(results)
    return coco_gt, coco_dt


def run_pycocotools(coco_gt, coco_dt):
    """COCOeval(segm) evaluate() + accumulate() (timed), then the 12 summary numbers."""
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco_eval = COCOeval(coco_gt, coco_dt, 'segm')
        start = time.perf_counter()
        coco_eval.evaluate()
        coco_eval.accumulate()
        seconds = time.perf_counter() - start
        coco_eval.summarize()
    return seconds, numpy.where(coco_eval.stats == -1, numpy.nan, coco_eval.stats)


def run_cvzoo(problem, pred_runs, gt_runs):
    """The whole eval_instance_segmentation_coco call (timed) and its 12 numbers."""
    start = time.perf_counter()
    result = eval_instance_segmentation_coco(pred_runs, problem['pred_label'],
                                             problem['pred_score'], gt_runs,
                                             problem['gt_label'])
    seconds = time.perf_counter() - start
    return seconds, numpy.array([v for k, v in result.items() if k.startswith(('map/', 'mar/'))])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n-img', type=int, default=5000)
    parser.add_argument('--repeat', type=int, default=1)
    args = parser.parse_args()
    problem = make_problem(args.n_img)
    pred_runs = [rectangle_runs(b, SIZE) for b in problem['pred_bbox']]
    gt_runs = [rectangle_runs(b, SIZE) for b in problem['gt_bbox']]
    n_run = sum(len(r.starts) for r in pred_runs + gt_runs)
    print(f'{args.n_img} images of {SIZE[1]}x{SIZE[0]}, '
          f'{sum(len(b) for b in problem["gt_bbox"])} ground-truth and '
          f'{args.n_img * N_PRED} predicted masks ({n_run} runs), {N_CLASS} classes; '
          f'{os.cpu_count()} CPU cores, OPENBLAS_NUM_THREADS='
          f'{os.environ.get("OPENBLAS_NUM_THREADS", "unset")}', flush=True)
    coco_gt, coco_dt = pycocotools_inputs(problem, pred_runs, gt_runs)
    runs = max(args.repeat, 1)
    ours, theirs = [], []
    for attempt in range(runs + (runs > 1)):
        seconds, ours_stats = run_cvzoo(problem, pred_runs, gt_runs)
        ours.append(seconds)
        seconds, their_stats = run_pycocotools(coco_gt, coco_dt)
        theirs.append(seconds)
        print(f'  run {attempt}: cvzoo {ours[-1]:.1f} s, pycocotools {theirs[-1]:.1f} s',
              flush=True)
    if runs > 1:
        ours, theirs = ours[1:], theirs[1:]
    ours, theirs = statistics.median(ours), statistics.median(theirs)
    print(f'eval_instance_segmentation_coco: {ours:.2f} s')
    print(f'pycocotools COCOeval(segm) evaluate + accumulate: {theirs:.2f} s')
    print(f'ratio (pycocotools / cvzoo): {theirs / ours:.2f}')
    print(f'largest difference of the 12 numbers: '
          f'{numpy.nanmax(numpy.abs(ours_stats - their_stats)):.2e}')


if __name__ == '__main__':
    main()
