"""Where a ResNet-50 training step's time goes on a GPU: host against device, per function.

Four views of the same step (forward, backward and MomentumSGD update of
``get_model('resnet50')`` on random 224x224 images), each after warm-up steps:

- the step's wall time at two batch sizes (a step bound by the host's Python work
  barely grows with the batch);
- ``cupyx.profiler.benchmark``: the host time of launching a step against the device
  time between its first and last kernel;
- per function class: forward and backward time with the device synchronised around
  each call (adds a sync per call, and a backward that applies other functions counts
  their time too, so the sum exceeds the step; the ranking is what matters), and the
  optimizer update on its own;
- the host profile of one step (cProfile, no syncs), by own time.

Each ``--tf32`` value runs in its own process (CuPy reads ``CUPY_TF32`` when it starts):
'0' keeps float32 products, '1' lets cuBLAS use TensorFloat-32 as PyTorch's cuDNN
convolutions do by default. PyTorch's step is timed beside it with TF32 off and on.

    python bench/profile_gpu_step.py --out gpu_report/profile.md
    python bench/profile_gpu_step.py --device cpu --batch 2 --size 32 --quick   # smoke test
"""

import argparse
import collections
import cProfile
import io
import os
import pathlib
import pstats
import statistics
import subprocess
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--device', default='cuda:0')
    parser.add_argument('--batch', type=int, default=32)
    parser.add_argument('--small-batch', type=int, default=8)
    parser.add_argument('--size', type=int, default=224)
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--tf32', nargs='+', default=['0', '1'], choices=['0', '1'])
    parser.add_argument('--quick', action='store_true', help='2 runs, no torch (a smoke test)')
    parser.add_argument('--out', default=None, help='write the report to this file too')
    parser.add_argument('--one', action='store_true', help=argparse.SUPPRESS)
    return parser


# --- one process: one TF32 setting -----------------------------------------------------

def _setup(args, batch):
    import cvzoo.core.functions as F
    from cvzoo.core import backend
    from cvzoo.core.optimizers import MomentumSGD
    from cvzoo.models import get_model

    device = backend.get_device(args.device)
    rng = numpy.random.default_rng(0)
    x = backend.to_device(
        rng.standard_normal((batch, 3, args.size, args.size)).astype(numpy.float32), device)
    t = backend.to_device(rng.integers(0, 1000, batch).astype(numpy.int32), device)
    model = get_model('resnet50', n_class=1000).to_device(device)
    optimizer = MomentumSGD(lr=0.01, momentum=0.9).setup(model)

    def step():
        optimizer.update(lambda: F.softmax_cross_entropy(model(x), t))

    return device, step, optimizer


def _sync_of(device):
    return device.synchronize  # a no-op on the CPU


def _median_ms(run, sync, runs):
    times = []
    for _ in range(runs):
        sync()
        start = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _function_classes():
    from cvzoo.core import function_node

    seen, todo = [], [function_node.FunctionNode]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def _per_function(step, sync, runs):
    """{(class name, 'forward' | 'backward'): [calls, seconds]} over ``runs`` steps."""
    totals = collections.defaultdict(lambda: [0, 0.0])
    patched = []

    def wrap(cls, name):
        original = cls.__dict__[name]

        def timed(self, *a, **k):
            sync()
            start = time.perf_counter()
            out = original(self, *a, **k)
            sync()
            entry = totals[(type(self).__name__, name)]
            entry[0] += 1
            entry[1] += time.perf_counter() - start
            return out

        setattr(cls, name, timed)
        patched.append((cls, name, original))

    for cls in _function_classes():
        for name in ('forward', 'backward'):
            if name in cls.__dict__:
                wrap(cls, name)
    try:
        for _ in range(runs):
            step()
    finally:
        for cls, name, original in reversed(patched):
            setattr(cls, name, original)
    return totals


def _one(args):
    """Measure in this process; print a markdown fragment."""
    runs = 2 if args.quick else args.runs
    lines = [f'### cvzoo, CUPY_TF32={os.environ.get("CUPY_TF32", "0")}', '']
    for batch in (args.small_batch, args.batch):
        device, step, optimizer = _setup(args, batch)
        sync = _sync_of(device)
        for _ in range(1 if args.quick else 3):
            step()
        ms = _median_ms(step, sync, runs)
        lines.append(f'- step, batch {batch}: {ms:.1f} ms (median of {runs})')
    update_ms = _median_ms(lambda: optimizer.update(), sync, runs)
    lines.append(f'- optimizer update alone (batch {args.batch} gradients): {update_ms:.1f} ms')
    if device.kind == 'cuda':
        from cupyx.profiler import benchmark

        result = benchmark(step, n_repeat=runs, n_warmup=1)
        cpu = numpy.median(result.cpu_times) * 1000
        gpu = numpy.median(result.gpu_times[0]) * 1000
        lines.append(f'- cupyx.profiler.benchmark, batch {args.batch}: host {cpu:.1f} ms, '
                     f'device {gpu:.1f} ms per step')
    totals = _per_function(step, sync, 1 if args.quick else 3)
    grand = sum(seconds for _, seconds in totals.values()) or 1.0
    lines += ['', f'Per function (batch {args.batch}, synchronised around each call, '
              f'{"1" if args.quick else "3"} steps):', '',
              '| function | pass | calls/step | ms/step | share |', '| --- | --- | ---: | ---: | ---: |']
    n_steps = 1 if args.quick else 3
    ranked = sorted(totals.items(), key=lambda item: -item[1][1])
    for (name, which), (calls, seconds) in ranked[:20]:
        lines.append(f'| {name} | {which} | {calls // n_steps} | {seconds / n_steps * 1000:.2f} '
                     f'| {seconds / grand:.1%} |')
    profile = cProfile.Profile()
    profile.enable()
    step()
    sync()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats('tottime').print_stats(15)
    lines += ['', 'Host profile of one step (cProfile, own time):', '', '```',
              *[line for line in text.getvalue().splitlines() if line.strip()][:30], '```', '']
    print('\n'.join(lines))


# --- PyTorch beside it ----------------------------------------------------------------

def _torch(args):
    try:
        import torch
        import torchvision
    except Exception as exc:  # noqa: BLE001 - any import failure means "no torch here"
        return [f'PyTorch: not importable ({type(exc).__name__})']
    if not args.device.startswith('cuda') or not torch.cuda.is_available():
        return ['PyTorch: no CUDA here']
    device = torch.device(args.device)
    lines = [f'### PyTorch {torch.__version__}, torchvision resnet50', '']
    rng = numpy.random.default_rng(0)
    for tf32 in args.tf32:
        torch.backends.cudnn.allow_tf32 = tf32 == '1'
        torch.backends.cuda.matmul.allow_tf32 = tf32 == '1'
        for batch in (args.small_batch, args.batch):
            net = torchvision.models.resnet50(weights=None).to(device).train()
            opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
            x = torch.from_numpy(rng.standard_normal(
                (batch, 3, args.size, args.size)).astype(numpy.float32)).to(device)
            t = torch.from_numpy(rng.integers(0, 1000, batch)).to(device)

            def step():
                opt.zero_grad(set_to_none=True)
                torch.nn.functional.cross_entropy(net(x), t).backward()
                opt.step()

            for _ in range(3):
                step()
            ms = _median_ms(step, lambda: torch.cuda.synchronize(device), args.runs)
            lines.append(f'- TF32 {"on" if tf32 == "1" else "off"} (cuDNN and matmul), '
                         f'batch {batch}: {ms:.1f} ms')
    return lines + ['']


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.one:
        _one(args)
        return 0
    report = ['## profile_gpu_step.py', '', f'- device {args.device}; '
              f'`python bench/profile_gpu_step.py {" ".join(argv or sys.argv[1:])}`', '']
    for tf32 in args.tf32:
        env = dict(os.environ, CUPY_TF32=tf32)
        command = [sys.executable, __file__, '--one', '--device', args.device,
                   '--batch', str(args.batch), '--small-batch', str(args.small_batch),
                   '--size', str(args.size), '--runs', str(args.runs)]
        if args.quick:
            command.append('--quick')
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        report.append(done.stdout if done.returncode == 0 else
                      f'CUPY_TF32={tf32}: failed (exit {done.returncode})\n```\n'
                      f'{done.stderr[-3000:]}\n```\n')
    if not args.quick:
        report += _torch(args)
    text = '\n'.join(report)
    print(text)
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
