"""SSD300's post-processing share of predict() ('evaluate' preset) as the score
distribution goes from random weights to one like a trained model's.

Random weights give every (anchor, class) pair about 1/21 > 0.01, so all 8732 x 20 pairs
reach NMS: a worst case no trained detector produces. With no SSD weights on the
machine, a trained head is approximated by raising the background logit by ``--bias``
(a trained SSD calls almost every anchor background), the foreground logits kept random.

    OPENBLAS_NUM_THREADS=1 python bench/bench_ssd_postprocessing.py [--biases 0 4 6 8]

Prints per bias: predict() median, decode+NMS median, their ratio and the detections.
"""

import argparse
import pathlib
import statistics
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cvzoo.models import get_model  # noqa: E402
from cvzoo.utils.image import read_image  # noqa: E402

IMAGE = ROOT.parent / 'shared' / 'data' / 'images' / 'voc2007_test' / '000456.jpg'


def _image():
    if IMAGE.is_file():
        return read_image(str(IMAGE)), IMAGE.name
    rng = numpy.random.default_rng(0)
    return rng.uniform(0, 255, (3, 375, 500)).astype(numpy.float32), 'random 500x375'


def _timed_post_processing(model):
    """Wrap the instance's decode() and suppress() to add their time to a counter."""
    spent = {'seconds': 0.0}
    for name in ('decode', 'suppress'):
        method = getattr(model, name)

        def wrapped(*args, _method=method, **kwargs):
            start = time.perf_counter()
            result = _method(*args, **kwargs)
            spent['seconds'] += time.perf_counter() - start
            return result
        setattr(model, name, wrapped)
    return spent


def measure(bias, img, runs):
    """predict() and decode+NMS medians (s) and the detection count for one bias."""
    numpy.random.seed(0)
    model = get_model('ssd300', pretrained_model=None, n_fg_class=20)
    model.use_preset('evaluate')
    n_class = model.multibox.n_class
    for conv in model.multibox.conf:
        conv.b.array.reshape(-1, n_class)[:, 0] += bias
    spent = _timed_post_processing(model)
    totals, posts = [], []
    for run in range(runs + 1):
        spent['seconds'] = 0.0
        start = time.perf_counter()
        bboxes, _, _ = model.predict([img])
        if run:  # the first run warms up
            totals.append(time.perf_counter() - start)
            posts.append(spent['seconds'])
    return statistics.median(totals), statistics.median(posts), len(bboxes[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--biases', type=float, nargs='+', default=[0.0, 4.0, 6.0, 8.0])
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()
    img, name = _image()
    print(f'SSD300, 20 classes, evaluate preset, {name}, median of {args.runs} after a warm-up')
    print('| background bias | predict() | decode+NMS | share | detections |')
    print('| ---: | ---: | ---: | ---: | ---: |')
    for bias in args.biases:
        total, post, count = measure(bias, img, args.runs)
        print(f'| {bias:g} | {total * 1e3:.0f} ms | {post * 1e3:.0f} ms | '
              f'{100 * post / total:.1f}% | {count} |')


if __name__ == '__main__':
    main()
