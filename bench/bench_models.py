"""predict() latency, throughput and peak memory of every registered model, one process each.

For each model of a task (``cvzoo.models.list_models(task)``, random weights): the
median latency of ``predict()`` on one image, images/s of ``predict()`` on a batch of 8,
each the median of --runs runs after one warm-up run, and the peak resident memory
(``ru_maxrss``) of the child process that built and ran the model. Images are random
224x224 RGB; predict() includes the model's own preprocessing. Prints a table with the
machine's core count; ``--write-docs`` also puts it into the "Models" section of
docs/benchmarks.md with the command.

    OPENBLAS_NUM_THREADS=1 python bench/bench_models.py [--models resnet50 squeezenet1_1]
        [--runs 5] [--task classification] [--write-docs]

A task is added with a function ``images -> None`` that calls predict() in TASKS.
"""

import argparse
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs' / 'benchmarks.md'
TASKS = {'classification': {'size': (224, 224), 'kwargs': {'n_class': 1000}},
         # CamVid's 360x480 (the 480x360 image); 21 classes fit every segmenter
         'semantic_segmentation': {'size': (360, 480), 'kwargs': {'n_class': 21}}}
BATCH = 8


def _child(name, task, runs):
    """Build ``name`` with random weights, time predict(), print one JSON line."""
    from cvzoo.models import get_model  # only the child needs it

    spec = TASKS[task]
    model = get_model(name, pretrained_model=None, **spec['kwargs'])
    rng = numpy.random.default_rng(0)
    imgs = [rng.uniform(0, 255, (3, *spec['size'])).astype(numpy.float32)
            for _ in range(BATCH)]
    timings = {}
    for batch in (1, BATCH):
        model.predict(imgs[:batch])  # warm-up
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            model.predict(imgs[:batch])
            seconds.append(time.perf_counter() - start)
        timings[batch] = statistics.median(seconds)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    n_param = sum(p.size for p in model.params())
    print(json.dumps({'name': name, 'latency_ms': 1000 * timings[1],
                      'images_per_s': BATCH / timings[BATCH], 'peak_mb': peak_mb,
                      'n_param': n_param}))


def _run_one(name, task, runs):
    command = [sys.executable, __file__, '--child', name, '--task', task, '--runs', str(runs)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get('PYTHONPATH', '')]))
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode:
        return {'name': name, 'error': result.stderr.strip().splitlines()[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _table(rows, task, runs):
    H, W = TASKS[task]['size']
    threads = os.environ.get('OPENBLAS_NUM_THREADS', 'unset')
    caption = (f'{task}: predict() on random {H}x{W} images, random weights, median of '
               f'{runs} runs after 1 warm-up, {os.cpu_count()} CPU cores, '
               f'OPENBLAS_NUM_THREADS={threads}')
    lines = [caption, '',
             '| model | params | latency, batch 1 | images/s, batch 8 | peak RSS |',
             '| --- | ---: | ---: | ---: | ---: |']
    for row in rows:
        if 'error' in row:
            lines.append(f'| {row["name"]} | failed: {row["error"]} | | | |')
            continue
        lines.append(f'| {row["name"]} | {row["n_param"] / 1e6:.1f} M | '
                     f'{row["latency_ms"]:.0f} ms | {row["images_per_s"]:.2f} | '
                     f'{row["peak_mb"]:.0f} MB |')
    return '\n'.join(lines)


def _write_docs(table, command):
    text = DOCS.read_text() if DOCS.exists() else '# Benchmarks\n'
    section = (f'## Models\n\n{table}\n\nCommand (from the repository root, on a machine '
               f'shared with other jobs; absolute numbers vary with the load):\n\n'
               f'    {command}\n\n')
    match = re.search(r'^## Models\n.*?(?=^## |\Z)', text, flags=re.MULTILINE | re.DOTALL)
    text = (text[:match.start()] + section + text[match.end():] if match
            else text.rstrip('\n') + '\n\n' + section)
    DOCS.write_text(text.rstrip('\n') + '\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--task', default='classification', choices=sorted(TASKS))
    parser.add_argument('--models', nargs='*', help='registry names (default: all of the task)')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--write-docs', action='store_true')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.task, args.runs)
        return
    sys.path.insert(0, str(ROOT))
    from cvzoo.models import list_models  # after the path is set

    names = args.models or list_models(args.task)
    rows = []
    for name in names:
        rows.append(_run_one(name, args.task, args.runs))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    table = _table(rows, args.task, args.runs)
    print(table)
    if args.write_docs:
        threads = os.environ.get('OPENBLAS_NUM_THREADS')
        prefix = f'OPENBLAS_NUM_THREADS={threads} ' if threads else ''
        _write_docs(table, prefix + 'python bench/bench_models.py ' + ' '.join(sys.argv[1:]))


if __name__ == '__main__':
    main()
