"""cuDNN against the im2col/CuPy path: numerics of each operation and a ResNet-50 step.

Two parts, on one device (``--device``, cuda:0 by default):

- check: for convolution (plain, stride, padding, dilation, groups, depthwise,
  cover_all), deconvolution (with an outsize), batch normalisation (training with running
  statistics, and inference), average pooling (padding counted and not) and max pooling
  (inference: its forward is the cuDNN one) on random float32 inputs, the forward output and the
  gradients of every input with ``use_cudnn='auto'`` against ``'never'`` (the reference),
  with ``allow_tf32=False``, as the largest error relative to the reference's largest
  magnitude; a row also says how many cuDNN plans ran and how many graphs cuDNN refused;
- time: a ResNet-50 training step (forward, backward, MomentumSGD) at batch 32 of
  224x224 with ``use_cudnn='never'`` and ``'auto'`` (with ``--benchmark`` also ``'auto'``
  with ``cudnn_benchmark``, whose first run builds and times every plan of every
  convolution), interleaved after warm-up runs, medians.

Exits 1 when a check exceeds its tolerance, or with ``--require-cudnn`` when cuDNN did not
run. ``--small`` shrinks everything (a smoke test on the CPU or the CuPy stand-in).

    python bench/bench_cudnn.py --require-cudnn --out gpu_report/cudnn.md
    python bench/bench_cudnn.py --device cpu --small
"""

import argparse
import pathlib
import statistics
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import cvzoo.core.functions as F  # noqa: E402
from cvzoo.core import backend, using_config  # noqa: E402
from cvzoo.core.cudnn import plans  # noqa: E402
from cvzoo.core.optimizers import MomentumSGD  # noqa: E402
from cvzoo.core.variable import Variable  # noqa: E402
from cvzoo.models import get_model  # noqa: E402

TOLERANCE = 1e-4  # float32 without TF32, relative to the reference's largest magnitude
TIMINGS = (('never', {'use_cudnn': 'never'}), ('auto', {'use_cudnn': 'auto'}))
BENCHMARK_TIMING = ('auto + benchmark', {'use_cudnn': 'auto', 'cudnn_benchmark': True})


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--device', default='cuda:0', help="'cuda:N' or 'cpu'")
    parser.add_argument('--batch', type=int, default=32, help='ResNet-50 batch size')
    parser.add_argument('--size', type=int, default=224, help='ResNet-50 image side')
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--small', action='store_true',
                        help='small check shapes, ResNet-50 batch 2 of 32x32, no warm-up, 1 run')
    parser.add_argument('--benchmark', action='store_true',
                        help="also time use_cudnn='auto' with cudnn_benchmark")
    parser.add_argument('--require-cudnn', action='store_true',
                        help='exit 1 when cuDNN ran for none of the checks')
    parser.add_argument('--out', default=None, help='write the report to this file too')
    return parser


def _cases(small):
    """(name, function of Variables, input shapes); the shapes are NCHW."""
    n, c, s = (2, 4, 9) if small else (8, 32, 28)

    def bn_train(x, gamma, beta):
        running = [backend.get_array_module(x.array).zeros(c, numpy.float32) for _ in '12']
        bn_train.extras = running  # compared too: cuDNN's momentum must be 1 - decay
        return F.batch_normalization(x, gamma, beta, running_mean=running[0],
                                     running_var=running[1], decay=0.7)

    def bn_inference(x, gamma, beta):
        xp = backend.get_array_module(x.array)
        mean, var = xp.full(c, 0.25, numpy.float32), xp.full(c, 1.5, numpy.float32)
        return F.fixed_batch_normalization(x, gamma, beta, mean, var)

    conv = F.convolution_2d
    return [
        ('conv 3x3 pad 1', lambda x, W: conv(x, W, pad=1), [(n, c, s, s), (c, c, 3, 3)]),
        ('conv 3x3 stride 2', lambda x, W: conv(x, W, stride=2, pad=1),
         [(n, c, s, s), (2 * c, c, 3, 3)]),
        ('conv 1x1', lambda x, W: conv(x, W), [(n, c, s, s), (2 * c, c, 1, 1)]),
        ('conv dilate 2', lambda x, W: conv(x, W, pad=2, dilate=2), [(n, c, s, s), (c, c, 3, 3)]),
        ('conv groups 2', lambda x, W: conv(x, W, pad=1, groups=2),
         [(n, c, s, s), (c, c // 2, 3, 3)]),
        ('conv depthwise', lambda x, W: conv(x, W, pad=1, groups=c), [(n, c, s, s), (c, 1, 3, 3)]),
        ('conv 7x7 stride 2 cover_all', lambda x, W: conv(x, W, stride=2, pad=3, cover_all=True),
         [(n, 3, s, s), (c, 3, 7, 7)]),
        ('deconv stride 2 outsize', lambda x, W: F.deconvolution_2d(
            x, W, stride=2, pad=1, outsize=(2 * s, 2 * s)), [(n, c, s, s), (c, c // 2, 4, 4)]),
        ('batch norm (training)', bn_train, [(n, c, s, s), (c,), (c,)]),
        ('batch norm (inference)', bn_inference, [(n, c, s, s), (c,), (c,)]),
        ('average pooling 3x3/2 pad 1', lambda x: F.average_pooling_2d(x, 3, 2, 1),
         [(n, c, s, s)]),
        ('average pooling, padding excluded', lambda x: F.average_pooling_2d(
            x, 3, 2, 1, pad_value=None), [(n, c, s, s)]),
        ('max pooling 3x3/2 pad 1 (inference)', _inference(
            lambda x: F.max_pooling_2d(x, 3, 2, 1, cover_all=False)), [(n, c, s, s)]),
    ]


def _inference(func):
    """``func`` without a graph (max pooling keeps its winners for a backward on CuPy)."""
    def run(*xs):
        with using_config('enable_backprop', False):
            return func(*xs)
    run.forward_only = True
    return run


def _outputs(func, arrays):
    """The forward output, each input's gradient (for a fixed output gradient) and the
    arrays the function updated in place (``func.extras``)."""
    xs = [Variable(a.copy()) for a in arrays]
    y = func(*xs)
    if getattr(func, 'forward_only', False):
        return [y.array]
    gy = backend.get_array_module(y.array).asarray(
        numpy.random.default_rng(1).standard_normal(y.shape).astype(numpy.float32))
    F.sum(y * Variable(gy, requires_grad=False)).backward()
    return [y.array] + [x.grad for x in xs] + list(getattr(func, 'extras', []))


def _relative_error(got, expected):
    got, expected = backend.to_numpy(got), backend.to_numpy(expected)
    scale = max(float(numpy.abs(expected).max()), 1e-30)
    return float(numpy.abs(got.astype(numpy.float64) - expected).max()) / scale


def check_row(name, func, shapes, device):
    """One table row: the largest relative error and whether cuDNN ran or refused."""
    rng = numpy.random.default_rng(0)
    arrays = [backend.to_device(rng.uniform(0.5, 1.5, s).astype(numpy.float32)
                                if len(s) == 1 else
                                rng.standard_normal(s).astype(numpy.float32), device)
              for s in shapes]
    with using_config('use_cudnn', 'never'):
        expected = _outputs(func, arrays)
    before = dict(plans.counts)
    with using_config('use_cudnn', 'auto'), using_config('allow_tf32', False):
        got = _outputs(func, arrays)
    ran = plans.counts['executions'] - before.get('executions', 0)
    refused = plans.counts['refused'] - before.get('refused', 0)
    error = max(_relative_error(g, e) for g, e in zip(got, expected))
    ok = error <= TOLERANCE
    row = f'| {name} | {error:.2e} | {"ok" if ok else "FAILED"} | {ran} | {refused} |'
    return row, ok, ran


def _resnet50_step(args, device):
    rng = numpy.random.default_rng(0)
    x = backend.to_device(rng.standard_normal((args.batch, 3, args.size, args.size))
                          .astype(numpy.float32), device)
    t = backend.to_device(rng.integers(0, 1000, args.batch).astype(numpy.int32), device)
    model = get_model('resnet50', n_class=1000).to_device(device)
    optimizer = MomentumSGD(lr=0.01, momentum=0.9).setup(model)

    def step():
        optimizer.update(lambda x, t: F.softmax_cross_entropy(model(x), t), x, t)

    return step


def time_rows(args, device):
    """Median step times of ResNet-50 under each setting of TIMINGS, interleaved."""
    step = _resnet50_step(args, device)
    timings = TIMINGS + ((BENCHMARK_TIMING,) if args.benchmark else ())
    times = {name: [] for name, _ in timings}
    for run in range(args.warmup + args.runs):
        for name, settings in timings:
            with _settings(settings):
                device.synchronize()
                start = time.perf_counter()
                step()
                device.synchronize()
            if run >= args.warmup:
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times['never'])
    return [f'| resnet50 {name} | {statistics.median(t) * 1000:.1f} ms (n={len(t)}) | '
            f'{base / statistics.median(t):.2f}x |' for name, t in times.items()]


class _settings:
    """using_config for several fields at once."""

    def __init__(self, settings):
        self.managers = [using_config(k, v) for k, v in settings.items()]

    def __enter__(self):
        for manager in self.managers:
            manager.__enter__()

    def __exit__(self, *exc_info):
        for manager in reversed(self.managers):
            manager.__exit__(*exc_info)


def main(argv=None):
    """Run both parts; return (report lines, exit status)."""
    args = _parser().parse_args(argv)
    if args.small:
        args.batch, args.size, args.warmup, args.runs = 2, 32, 0, 1
    device = backend.get_device(args.device)
    from cvzoo.core import cudnn

    frontend = cudnn.frontend()
    version = getattr(frontend, 'backend_version', lambda: '?')() if frontend else None
    lines = ['## bench_cudnn.py', '',
             f'- device {device}; cudnn frontend: '
             + (f'{getattr(frontend, "__version__", "?")} (cuDNN {version})' if frontend
                else 'not importable'), '',
             '| check | max relative error | result | cuDNN calls | refused |',
             '| --- | ---: | --- | ---: | ---: |']
    status, cudnn_calls = 0, 0
    for name, func, shapes in _cases(args.small):
        row, ok, ran = check_row(name, func, shapes, device)
        status |= not ok
        cudnn_calls += ran
        lines.append(row)
        print(row, flush=True)
    lines += ['', '| ResNet-50 train step | median | speed-up over never |', '| --- | ---: | ---: |']
    times_rows = time_rows(args, device)
    lines += times_rows
    if args.require_cudnn and cudnn_calls == 0:
        lines.append('\ncuDNN ran for none of the checks (--require-cudnn)')
        status = 1
    print('\n'.join(lines[-len(times_rows) - 3:]), flush=True)
    if args.out:
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text('\n'.join(lines) + '\n')
    return lines, status


if __name__ == '__main__':
    sys.exit(main()[1])
