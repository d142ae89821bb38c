"""Time cvzoo's NMS on 1k and 10k boxes and compare with a plain greedy NumPy loop.

Two inputs per size: 'clustered' boxes jittered around n/100 objects (what a detector
gives NMS) and 'sparse' uniform random small boxes (few suppressions: the worst case of
the blocked algorithm). Prints the median of several runs after a warm-up.

    python bench/bench_nms.py
"""

import os
import statistics
import sys
import time

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from cvzoo.utils.nms import (  # noqa: E402
    batched_non_maximum_suppression, non_maximum_suppression)


def make_boxes(n, kind, rng):
    if kind == 'clustered':
        centres = rng.uniform(0, 1000, (max(n // 100, 1), 2))
        sizes = rng.uniform(30, 200, (len(centres), 2))
        owner = rng.integers(0, len(centres), n)
        centre = centres[owner] + rng.normal(0, 10, (n, 2))
        size = sizes[owner] * rng.uniform(0.8, 1.2, (n, 2))
    else:
        centre = rng.uniform(0, 1000, (n, 2))
        size = rng.uniform(10, 100, (n, 2))
    bbox = numpy.concatenate([centre - size / 2, centre + size / 2], axis=1)
    return bbox.astype(numpy.float32), rng.uniform(size=n).astype(numpy.float32)


def greedy_reference(bbox, thresh, score):
    """One Python step per box, vectorised over the kept boxes (the plain approach)."""
    order = numpy.argsort(-score, kind='stable')
    area = numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1)
    kept = []
    for i in order:
        if kept:
            top_left = numpy.maximum(bbox[i, :2], bbox[kept, :2])
            bottom_right = numpy.minimum(bbox[i, 2:], bbox[kept, 2:])
            inter = numpy.prod(numpy.maximum(bottom_right - top_left, 0), axis=1)
            if (inter / (area[i] + area[kept] - inter) >= thresh).any():
                continue
        kept.append(i)
    return numpy.array(kept, numpy.int32)


def median_ms(function, repeat):
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    rng = numpy.random.default_rng(0)
    print(f'NMS, thresh 0.5, {os.cpu_count()} CPU cores, median ms')
    print(f'{"boxes":>6} {"input":>10} {"kept":>6} {"cvzoo":>8} {"batched":>8} {"greedy":>8}')
    for n in (1000, 10000):
        for kind in ('clustered', 'sparse'):
            bbox, score = make_boxes(n, kind, rng)
            label = rng.integers(0, 20, n)
            kept = non_maximum_suppression(bbox, 0.5, score)
            assert numpy.array_equal(kept, greedy_reference(bbox, 0.5, score))
            ours = median_ms(lambda: non_maximum_suppression(bbox, 0.5, score), 7)
            batched = median_ms(
                lambda: batched_non_maximum_suppression(bbox, score, label, 0.5), 7)
            greedy = median_ms(lambda: greedy_reference(bbox, 0.5, score), 3)
            print(f'{n:>6} {kind:>10} {len(kept):>6} {ours:8.1f} {batched:8.1f} {greedy:8.1f}')


if __name__ == '__main__':
    main()
