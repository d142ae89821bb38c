"""predict() latency, training iteration and peak memory of every registered model, one
process each.

For each model of a task (``cvzoo.models.list_models(task)``) a child process builds the
model and times ``predict()`` (median of --runs runs after one warm-up run; predict()
includes the model's own pre- and post-processing), and for detection and semantic
segmentation a second child times one training iteration of the model's train chain
(forward, loss, backward and a MomentumSGD update at batch 1, after one warm-up
iteration). Each child's peak resident memory (``ru_maxrss``) is its own. What each task
measures is in model_workloads.py:

- classification: latency at batch 1 and images/s at batch 8, random 224x224 images,
  random weights;
- detection: the 500x375 image ../shared/data/images/voc2007_test/000456.jpg, predict()
  with the 'visualize' and 'evaluate' presets and the time of the detector's
  ``decode()`` + ``suppress()`` (decoding and NMS) inside it;
- semantic_segmentation (or ``segmentation``): a 360x480 CamVid test image;
- instance_segmentation: the detection image, predict() with both presets and the time
  of the model's ``paste_masks()`` (the mask paste) inside it; a training iteration
  where the bench knows the model's train chain (instance_segmentation_workloads.py);
- keypoint_detection: the detection image, predict() with both presets and the time of
  the heatmap decoding inside it; a training iteration with three people
  (keypoint_detection_workloads.py).

Models run with random weights unless their files are in the local weights mirror
(``$CVZOO_WEIGHTS_MIRROR``, default ../shared/data/weights when it exists). A model that
fails shows its error in its table row. Prints the table with the machine's core count
and load average; ``--write-docs`` also puts it with the command into its task's part of
the "Models" section of docs/benchmarks.md.

    OPENBLAS_NUM_THREADS=1 python bench/bench_models.py --task detection [--models ssd300]
        [--runs 3] [--timeout 3600] [--no-train] [--small] [--write-docs [--docs PATH]]

``--small`` builds each model small (as the tests do, random weights): a smoke run of
the bench itself, not a measurement.

A task is added in model_workloads.WORKLOADS (or a module of its own, see
:func:`_workloads`) and with a table function in TABLES.
"""

import argparse
import json
import os
import pathlib
import re
import resource
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs' / 'benchmarks.md'
DEFAULT_MIRROR = ROOT.parent / 'shared' / 'data' / 'weights'
TASKS = ('classification', 'detection', 'semantic_segmentation', 'instance_segmentation',
         'keypoint_detection')
# the tasks whose workloads take ``small`` (their modules of their own)
OWN_WORKLOADS = ('instance_segmentation', 'keypoint_detection')
TASK_ALIASES = {'segmentation': 'semantic_segmentation'}
TITLES = {'classification': 'Classification', 'detection': 'Detection',
          'semantic_segmentation': 'Semantic segmentation',
          'instance_segmentation': 'Instance segmentation',
          'keypoint_detection': 'Keypoint detection'}
ERROR_CHARS = 300  # of an error message shown in a table


def _workloads(task):
    """The task's ``{'predict': f, 'train': f}`` (only the child imports cvzoo's models).

    The workloads of OWN_WORKLOADS live in ``<task>_workloads.py`` and take ``small`` as a
    last argument; the other tasks' in model_workloads.WORKLOADS.
    """
    import importlib

    import model_workloads  # beside this file

    if task in OWN_WORKLOADS:
        return importlib.import_module(f'{task}_workloads').WORKLOADS
    return model_workloads.WORKLOADS[task]


def _child(name, task, part, runs, small=False):
    """Measure ``part`` ('predict' or 'train') of ``name``; print one JSON line."""
    import model_workloads

    workload = _workloads(task)[part]
    extra = (small,) if task in OWN_WORKLOADS else ()
    try:
        result = workload(name, runs, *extra) if part == 'predict' else workload(name, *extra)
    except model_workloads.NoTrainChain as exc:
        result = {'train_note': str(exc)}
    result['peak_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB
    print(json.dumps(result))


def _run_child(name, task, part, runs, timeout, env, small=False):
    """The child's result dict, or ``{'error': message}`` when it failed or timed out."""
    command = [sys.executable, __file__, '--child', part, '--models', name, '--task', task,
               '--runs', str(runs)] + (['--small'] if small else [])
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {'error': f'timed out after {timeout} s'}
    if result.returncode:
        lines = result.stderr.strip().splitlines() or [f'exit status {result.returncode}']
        return {'error': lines[-1][:ERROR_CHARS]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(name, task, runs, timeout=None, train=True, mirror=None, small=False):
    """One row: the predict child's results, and the train child's under ``train``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get('PYTHONPATH', '')]))
    if mirror:
        env['CVZOO_WEIGHTS_MIRROR'] = str(mirror)
    row = {'name': name,
           'predict': _run_child(name, task, 'predict', runs, timeout, env, small)}
    if train and task != 'classification' and 'error' not in row['predict']:
        row['train'] = _run_child(name, task, 'train', runs, timeout, env, small)
    return row


# --- tables -----------------------------------------------------------------------------

def _cell(text):
    return str(text).replace('|', '/').replace('\n', ' ')


def _seconds(seconds):
    """'0.4 ms', '12 ms', '1.23 s', '45.6 s'."""
    if seconds < 0.01:
        return f'{1000 * seconds:.1f} ms'
    if seconds < 1:
        return f'{1000 * seconds:.0f} ms'
    return f'{seconds:.2f} s' if seconds < 10 else f'{seconds:.1f} s'


def _train_cells(row, notes):
    """Training-iteration and peak-RSS cells of a row; adds a note for '-' and failures."""
    train = row.get('train')
    if train is None:
        return '', ''
    if 'error' in train:
        notes.append(f'{row["name"]}: the training iteration failed: {train["error"]}')
        return 'failed (see below)', ''
    if 'train_note' in train:
        notes.append(f'{row["name"]}: no training iteration: {train["train_note"]}')
        return '-', f'{train["peak_mb"]:.0f} MB'
    return (f'{_seconds(train["train_seconds"])} ({train["train_chain"]})',
            f'{train["peak_mb"]:.0f} MB')


def _failed_row(row, n_column):
    error = _cell(row['predict']['error'])
    return f'| {row["name"]} | failed: {error} |' + ' |' * (n_column - 2)


def classification_table(rows):
    """Markdown table of classification rows, and notes (none)."""
    lines = ['| model | params | latency, batch 1 | images/s, batch 8 | peak RSS |',
             '| --- | ---: | ---: | ---: | ---: |']
    for row in rows:
        result = row['predict']
        if 'error' in result:
            lines.append(_failed_row(row, 5))
            continue
        lines.append(f'| {row["name"]} | {result["n_param"] / 1e6:.1f} M | '
                     f'{result["latency_ms"]:.0f} ms | {result["images_per_s"]:.2f} | '
                     f'{result["peak_mb"]:.0f} MB |')
    return lines, []


def _post_cell(preset):
    if preset['post_seconds'] is None:
        return '-'
    share = 100 * preset['post_seconds'] / preset['seconds']
    share = f'{share:.1f}%' if share >= 0.1 else '<0.1%'
    return f'{_seconds(preset["post_seconds"])} ({share})'


def _preset_table(rows, post_name, count_name, no_post_note):
    """Rows of predict() per preset with the share of a post-processing step, and notes."""
    lines = [(f'| model | weights | params | network input (H x W) | predict(), visualize | '
              f'{post_name} | predict(), evaluate | {post_name} | {count_name} (vis / eval) | '
              'train iteration, batch 1 | peak RSS (predict / train) |'),
             '| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |']
    notes = []
    for row in rows:
        result = row['predict']
        if 'error' in result:
            lines.append(_failed_row(row, 11))
            continue
        train, train_mb = _train_cells(row, notes)
        vis, ev = result['visualize'], result['evaluate']
        if vis['post_seconds'] is None:
            notes.append(f'{row["name"]}: {no_post_note}')
        lines.append(
            f'| {row["name"]} | {result["weights"]} | {result["n_param"] / 1e6:.1f} M | '
            f'{result["input"]} | {_seconds(vis["seconds"])} | {_post_cell(vis)} | '
            f'{_seconds(ev["seconds"])} | {_post_cell(ev)} | '
            f'{vis["detections"]} / {ev["detections"]} | {train} | '
            f'{result["peak_mb"]:.0f}' + (f' / {train_mb}' if train_mb else ' MB') + ' |')
    return lines, notes


def detection_table(rows):
    """Markdown table of detection rows, and notes for '-' cells and failures."""
    return _preset_table(rows, 'decode+NMS', 'detections',
                         'predict() calls no decode()/suppress(), so the post-processing '
                         'share is not measured')


def instance_segmentation_table(rows):
    """Markdown table of instance segmentation rows (mask-paste share), and notes."""
    return _preset_table(rows, 'mask paste', 'instances',
                         'predict() calls no paste_masks() (or found no instance), so the '
                         'mask-paste share is not measured')


def segmentation_table(rows):
    """Markdown table of semantic segmentation rows, and notes."""
    lines = [('| model | weights | params | network input (H x W) | predict(), batch 1 | '
              'train iteration, batch 1 | peak RSS (predict / train) |'),
             '| --- | --- | ---: | --- | ---: | --- | ---: |']
    notes = []
    for row in rows:
        result = row['predict']
        if 'error' in result:
            lines.append(_failed_row(row, 7))
            continue
        train, train_mb = _train_cells(row, notes)
        lines.append(
            f'| {row["name"]} | {result["weights"]} | {result["n_param"] / 1e6:.1f} M | '
            f'{result["input"]} | {_seconds(result["latency_ms"] / 1000)} | {train} | '
            f'{result["peak_mb"]:.0f}' + (f' / {train_mb}' if train_mb else ' MB') + ' |')
    return lines, notes


def keypoint_detection_table(rows):
    """Markdown table of keypoint detection rows (heatmap-decoding share), and notes."""
    return _preset_table(rows, 'heatmap decoding', 'people',
                         'predict() found no instance, so the decoding share is not '
                         'measured')


TABLES = {'classification': classification_table, 'detection': detection_table,
          'semantic_segmentation': segmentation_table,
          'instance_segmentation': instance_segmentation_table,
          'keypoint_detection': keypoint_detection_table}


def _caption(task, rows, runs, load):
    threads = os.environ.get('OPENBLAS_NUM_THREADS', 'unset')
    images = ', '.join(sorted({row['predict']['image'] for row in rows
                               if 'image' in row['predict']})) or 'the task image'
    train = ('the training iteration is one MomentumSGD update of the train chain named '
             '(forward, losses, backward, update) at batch 1 after a warm-up iteration')
    what = {'classification': 'predict() on random 224x224 images, random weights',
            'detection': f'predict() at batch 1 on {images} with each preset; decode+NMS is '
                         "the time of the detector's decode() and suppress() inside "
                         f'predict() (its share in brackets); {train}, on that image with '
                         '3 ground-truth boxes',
            'semantic_segmentation': f'predict() at batch 1 on {images}; {train}, on the '
                                     'network input of that image with random labels',
            'instance_segmentation': f'predict() at batch 1 on {images} with each preset; '
                                     "mask paste is the time of the model's paste_masks() "
                                     'inside predict() (its share in brackets); '
                                     f'{train}, on that image with 3 rectangular '
                                     'ground-truth instances',
            'keypoint_detection': f'predict() at batch 1 on {images} with each preset; '
                                  'heatmap decoding is the time of heatmaps_to_points() '
                                  'inside predict() (its share in brackets); '
                                  f'{train}, on that image with 3 people of 17 visible '
                                  'keypoints'}[task]
    return (f'{what}. Median of {runs} run{"s" * (runs != 1)} after 1 warm-up, {os.cpu_count()} CPU cores, '
            f'OPENBLAS_NUM_THREADS={threads}, load average {load[0]:.1f} at the start and '
            f'{load[1]:.1f} at the end (1-minute).')


def report(task, rows, runs, load):
    """The task's text for the docs: caption, table and notes."""
    lines, notes = TABLES[task](rows)
    text = _caption(task, rows, runs, load) + '\n\n' + '\n'.join(lines)
    if notes:
        text += '\n\n' + '\n'.join(f'- {_cell(note)}' for note in notes)
    return text


# --- docs -------------------------------------------------------------------------------

def replace_models_part(text, title, body):
    """``text`` (a markdown page) with the '### title' part of its '## Models' section
    set to ``body``; the part (and the section) is appended when absent."""
    section = re.search(r'^## Models\n.*?(?=^## |\Z)', text, flags=re.MULTILINE | re.DOTALL)
    if section is None:
        text = text.rstrip('\n') + '\n\n## Models\n\n'
        section = re.search(r'^## Models\n.*\Z', text, flags=re.MULTILINE | re.DOTALL)
    models = section.group(0)
    part = re.search(rf'^### {re.escape(title)}\n.*?(?=^### |\Z)', models,
                     flags=re.MULTILINE | re.DOTALL)
    new = f'### {title}\n\n{body.strip()}\n\n'
    if part is None:
        models = models.rstrip('\n') + '\n\n' + new
    else:
        models = models[:part.start()] + new + models[part.end():]
    return (text[:section.start()] + models + text[section.end():]).rstrip('\n') + '\n'


def _write_docs(path, task, body, command):
    path = pathlib.Path(path)
    text = path.read_text() if path.exists() else '# Benchmarks\n'
    body += (f'\n\nCommand (from the repository root, on a machine shared with other jobs; '
             f'absolute numbers vary with the load):\n\n    {command}')
    path.write_text(replace_models_part(text, TITLES[task], body))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--task', default='classification',
                        choices=sorted(TASKS + tuple(TASK_ALIASES)))
    parser.add_argument('--models', nargs='*', help='registry names (default: all of the task)')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--timeout', type=float, default=None,
                        help='seconds per child process (default: none)')
    parser.add_argument('--no-train', action='store_true', help='skip the training iteration')
    parser.add_argument('--small', action='store_true',
                        help='build the models small (instance segmentation and keypoint '
                             'detection; a smoke run)')
    parser.add_argument('--write-docs', action='store_true')
    parser.add_argument('--docs', default=str(DOCS), help='the page --write-docs updates')
    parser.add_argument('--child', choices=('predict', 'train'), help=argparse.SUPPRESS)
    args = parser.parse_args()
    task = TASK_ALIASES.get(args.task, args.task)
    if args.child:
        _child(args.models[0], task, args.child, args.runs, args.small)
        return
    sys.path.insert(0, str(ROOT))
    from cvzoo.utils import paths  # after the path is set

    mirror = paths.weights_mirror() or (DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None)
    if args.models:
        names = args.models
    else:
        from cvzoo.models import list_models

        names = list_models(task)
    start_load = os.getloadavg()[0]
    rows = []
    for name in names:
        rows.append(measure(name, task, args.runs, args.timeout, not args.no_train, mirror,
                            args.small))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    body = report(task, rows, args.runs, (start_load, os.getloadavg()[0]))
    print(body)
    if args.write_docs:
        threads = os.environ.get('OPENBLAS_NUM_THREADS')
        prefix = f'OPENBLAS_NUM_THREADS={threads} ' if threads else ''
        command = prefix + 'python bench/bench_models.py ' + ' '.join(_without_docs(sys.argv[1:]))
        _write_docs(args.docs, task, body, command)


def _without_docs(argv):
    """``argv`` without ``--docs PATH`` / ``--docs=PATH`` (not part of the measurement)."""
    kept, skip = [], False
    for arg in argv:
        if skip or arg.startswith('--docs='):
            skip = False
            continue
        skip = arg == '--docs'
        if not skip:
            kept.append(arg)
    return kept


if __name__ == '__main__':
    main()
