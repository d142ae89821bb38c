"""Time cvzoo's NMS on 1k and 10k boxes against its previous version and a greedy loop.

Two inputs per size: 'clustered' boxes jittered around n/100 objects (what a detector
gives NMS) and 'sparse' uniform random boxes (few suppressions). Each input runs
through non_maximum_suppression and batched_non_maximum_suppression (20 labels), and
through the previous blocked implementation (kept here as ``_previous_nms``, cost about
kept x alive). The implementations are timed in turn, round after round, so that the
load of a shared machine spreads evenly over them; the table gives the median of the
rounds after a warm-up, in milliseconds of wall-clock time (``--clock process``: CPU
time of this process, less disturbed by other jobs on a shared machine), and whether all
results are identical. The greedy loop (one Python step per box) runs once per input.

    python bench/bench_nms.py [--rounds 15] [--thresh 0.5] [--clock wall|process]
"""

import argparse
import os
import statistics
import sys
import time

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from cvzoo.utils.nms import batched_non_maximum_suppression, non_maximum_suppression

_PREVIOUS_BLOCK = 512


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


def greedy_reference(bbox, thresh, score, label=None):
    """One Python step per box, vectorised over the kept boxes (the plain approach)."""
    order = numpy.argsort(-score, kind='stable')
    area = numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1)
    kept = []
    for i in order:
        if kept:
            top_left = numpy.maximum(bbox[i, :2], bbox[kept, :2])
            bottom_right = numpy.minimum(bbox[i, 2:], bbox[kept, 2:])
            inter = numpy.prod(numpy.maximum(bottom_right - top_left, 0), axis=1)
            hit = inter / (area[i] + area[kept] - inter) >= thresh
            if label is not None:
                hit &= label[kept] == label[i]
            if hit.any():
                continue
        kept.append(i)
    return numpy.array(kept, numpy.int32)


def _previous_hits(thresh, bbox_a, area_a, bbox_b, area_b):
    """The previous version's (len(a), len(b)) IoU >= thresh matrix."""
    if thresh <= 0:
        return numpy.ones((len(bbox_a), len(bbox_b)), dtype=bool)
    width = numpy.minimum(bbox_a[:, None, 2], bbox_b[None, :, 2])
    width -= numpy.maximum(bbox_a[:, None, 0], bbox_b[None, :, 0])
    height = numpy.minimum(bbox_a[:, None, 3], bbox_b[None, :, 3])
    height -= numpy.maximum(bbox_a[:, None, 1], bbox_b[None, :, 1])
    numpy.maximum(width, 0, out=width)
    numpy.maximum(height, 0, out=height)
    intersection = width * height
    hit = intersection * (1 + thresh) >= thresh * (area_a[:, None] + area_b[None, :])
    hit &= intersection > 0
    return hit


def _previous_hits_with_label(thresh, sorted_data, rows, columns):
    bbox, area, label = sorted_data
    hit = _previous_hits(thresh, bbox[rows], area[rows], bbox[columns], area[columns])
    if label is not None:
        hit &= label[rows][:, None] == label[columns][None, :]
    return hit


def _previous_resolve_block(hit):
    undecided = numpy.ones(hit.shape[0], dtype=bool)
    kept = numpy.zeros(hit.shape[0], dtype=bool)
    while undecided.any():
        blocking = hit & (undecided | kept)[:, None]
        new = undecided & ~blocking.any(axis=0)
        kept |= new
        undecided &= ~new
        undecided &= ~hit[kept].any(axis=0)
    return kept


def _previous_nms(bbox, thresh, score, label=None):
    """The previous cvzoo NMS (blocks of 512 boxes by score, kept x alive broadcasts)."""
    order = numpy.argsort(-score, kind='stable')
    sorted_bbox = bbox[order]
    size = numpy.maximum(sorted_bbox[:, 2:] - sorted_bbox[:, :2], 0)
    sorted_data = (sorted_bbox, size[:, 0] * size[:, 1],
                   None if label is None else label[order])
    n = len(bbox)
    alive = numpy.ones(n, dtype=bool)
    kept_parts = []
    for start in range(0, n, _PREVIOUS_BLOCK):
        stop = min(start + _PREVIOUS_BLOCK, n)
        candidates = start + numpy.nonzero(alive[start:stop])[0]
        if len(candidates) == 0:
            continue
        hit = numpy.triu(_previous_hits_with_label(thresh, sorted_data, candidates,
                                                   candidates), 1)
        kept = candidates[_previous_resolve_block(hit)]
        kept_parts.append(kept)
        rest = stop + numpy.nonzero(alive[stop:])[0]
        if len(rest) and len(kept):
            hit = _previous_hits_with_label(thresh, sorted_data, kept, rest)
            alive[rest[hit.any(axis=0)]] = False
    return order[numpy.concatenate(kept_parts)].astype(numpy.int32)


def _contenders(bbox, score, label, thresh):
    return {
        'cvzoo': lambda: non_maximum_suppression(bbox, thresh, score),
        'previous': lambda: _previous_nms(bbox, thresh, score),
        'batched': lambda: batched_non_maximum_suppression(bbox, score, label, thresh),
        'batched_previous': lambda: _previous_nms(bbox, thresh, score, label),
    }


def interleaved_median_ms(functions, rounds, clock=time.perf_counter):
    """Median ms of each function on ``clock``, timed in turn over ``rounds`` rounds."""
    for function in functions.values():
        function()
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            start = clock()
            function()
            times[name].append(clock() - start)
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=15)
    parser.add_argument('--thresh', type=float, default=0.5)
    parser.add_argument('--clock', choices=('wall', 'process'), default='wall')
    parser.add_argument('--no-greedy', action='store_true', help='skip the greedy loop')
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == 'wall' else time.process_time
    rng = numpy.random.default_rng(0)
    thresh = args.thresh
    print(f'NMS, thresh {thresh}, {os.cpu_count()} CPU cores, load average '
          f'{os.getloadavg()[0]:.1f}, median of {args.rounds} interleaved rounds, '
          f'{args.clock} ms')
    print(f'{"boxes":>6} {"input":>10} {"kept":>6} {"cvzoo":>8} {"previous":>9} {"ratio":>6}'
          f' {"batched":>8} {"previous":>9} {"ratio":>6} {"greedy":>9} {"same":>5}')
    for n in (1000, 10000):
        for kind in ('clustered', 'sparse'):
            bbox, score = make_boxes(n, kind, rng)
            label = rng.integers(0, 20, n).astype(numpy.int32)
            functions = _contenders(bbox, score, label, thresh)
            ms = interleaved_median_ms(functions, args.rounds, clock)
            results = [function() for function in functions.values()]
            same = (numpy.array_equal(results[0], results[1])
                    and numpy.array_equal(results[2], results[3]))
            greedy = float('nan')
            if not args.no_greedy:
                start = clock()
                same &= numpy.array_equal(results[0], greedy_reference(bbox, thresh, score))
                greedy = (clock() - start) * 1e3
            print(f'{n:>6} {kind:>10} {len(results[0]):>6} {ms["cvzoo"]:8.1f} '
                  f'{ms["previous"]:9.1f} {ms["previous"] / ms["cvzoo"]:6.1f} '
                  f'{ms["batched"]:8.1f} {ms["batched_previous"]:9.1f} '
                  f'{ms["batched_previous"] / ms["batched"]:6.1f} {greedy:9.0f} '
                  f'{"yes" if same else "NO":>5}')


if __name__ == '__main__':
    main()
