"""Benchmarks of the core engine: print tables, never assert.

Sections (``--section``, default all):

- ``matmul``: NumPy float32 matmul throughput, the ceiling every convolution aims at;
- ``conv``: convolution_2d forward and forward+backward on each distinct conv layer shape
  of ResNet-50 (torchvision's v1.5 layout, stride on the 3x3 convolution), the same layer
  as one plain matmul of the same GEMM shape, and torch when it is importable, timed
  interleaved in the same run;
- ``network``: a whole ResNet-50 (cvzoo's ``ResNet50(arch='fb')``, random weights, 224 x 224)
  at batch 1 and 8: inference forward and a training step (forward, softmax cross-entropy,
  backward, MomentumSGD update), interleaved with a plain PyTorch ResNet-50 of the same
  layout; then the peak memory (max RSS) of one training step at batch 8, each framework
  in a fresh subprocess. ``--network vgg16`` times cvzoo's ``VGG16`` against a plain
  PyTorch VGG16 of torchvision's layout instead (both with dropout in training), at
  ``--batch`` only, without the memory probe;
- ``inference``: ResNet-50 forwards only, cvzoo and torch interleaved at batch 1 and 8,
  with the page faults of each forward;
- ``copy``: a 58 MB copy into memory written before and into fresh memory, on one
  thread and shared among threads;
- ``threads``: ResNet-50 at ``--batch`` with the engine's threading and scratch-memory
  choices switched on and off, run by run in one process (see section_threads).

Every time is the median of ``--repeat`` runs after one warm-up run. A new section is a
function ``section_<name>(args)`` plus an entry in SECTIONS.

    python bench/bench_core.py --section conv --batch 8 --repeat 5
    python bench/bench_core.py --section network --network vgg16 --batch 8 --repeat 5
    OPENBLAS_NUM_THREADS=1 python bench/bench_core.py --section conv --torch-threads 1
"""

import argparse
import os
import statistics
import sys
import time

# NOTE: torch reads these when it is imported; set them first so that its idle OpenMP
# threads do not spin and steal the cores our runs use.
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')

import numpy  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

import cvzoo.core.functions as F  # noqa: E402
from cvzoo.core import config as config_module  # noqa: E402
from cvzoo.core import variable as variable_module  # noqa: E402

# ResNet-50 conv layers at a 224 x 224 input: name, (C, O, k, stride, pad, input H), count.
RESNET50_CONVS = [
    ('conv1 7x7/2', (3, 64, 7, 2, 3, 224), 1),
    ('s1 1x1 64-64', (64, 64, 1, 1, 0, 56), 1),
    ('s1 3x3 64-64', (64, 64, 3, 1, 1, 56), 3),
    ('s1 1x1 64-256', (64, 256, 1, 1, 0, 56), 4),
    ('s1 1x1 256-64', (256, 64, 1, 1, 0, 56), 2),
    ('s2 1x1 256-128', (256, 128, 1, 1, 0, 56), 1),
    ('s2 3x3/2 128-128', (128, 128, 3, 2, 1, 56), 1),
    ('s2 1x1/2 256-512', (256, 512, 1, 2, 0, 56), 1),
    ('s2 1x1 128-512', (128, 512, 1, 1, 0, 28), 4),
    ('s2 1x1 512-128', (512, 128, 1, 1, 0, 28), 3),
    ('s2 3x3 128-128', (128, 128, 3, 1, 1, 28), 3),
    ('s3 1x1 512-256', (512, 256, 1, 1, 0, 28), 1),
    ('s3 3x3/2 256-256', (256, 256, 3, 2, 1, 28), 1),
    ('s3 1x1/2 512-1024', (512, 1024, 1, 2, 0, 28), 1),
    ('s3 1x1 256-1024', (256, 1024, 1, 1, 0, 14), 6),
    ('s3 1x1 1024-256', (1024, 256, 1, 1, 0, 14), 5),
    ('s3 3x3 256-256', (256, 256, 3, 1, 1, 14), 5),
    ('s4 1x1 1024-512', (1024, 512, 1, 1, 0, 14), 1),
    ('s4 3x3/2 512-512', (512, 512, 3, 2, 1, 14), 1),
    ('s4 1x1/2 1024-2048', (1024, 2048, 1, 2, 0, 14), 1),
    ('s4 1x1 512-2048', (512, 2048, 1, 1, 0, 7), 3),
    ('s4 1x1 2048-512', (2048, 512, 1, 1, 0, 7), 2),
    ('s4 3x3 512-512', (512, 512, 3, 1, 1, 7), 2),
]


def median_time(func, repeat):
    """Median wall time of ``func()`` over ``repeat`` runs, after one warm-up run."""
    func()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_header(title, args):
    load = ', '.join(f'{value:.1f}' for value in os.getloadavg())
    blas_threads = os.environ.get('OPENBLAS_NUM_THREADS', 'default')
    print(f'\n## {title}  (cores: {os.cpu_count()}, load average {load}, numpy '
          f'{numpy.__version__}, OPENBLAS_NUM_THREADS={blas_threads}, median of '
          f'{args.repeat} runs after a warm-up)\n')


def section_matmul(args):
    """NumPy float32 matmul GFLOP/s on square matrices."""
    print_header('matmul, float32', args)
    rng = numpy.random.default_rng(0)
    print('| n | time (ms) | GFLOP/s |')
    print('| ---: | ---: | ---: |')
    for n in (512, 1024, 2048):
        a = rng.standard_normal((n, n), dtype=numpy.float32)
        b = rng.standard_normal((n, n), dtype=numpy.float32)
        seconds = median_time(lambda: a @ b, args.repeat)
        print(f'| {n} | {seconds * 1e3:.1f} | {2 * n ** 3 / seconds / 1e9:.1f} |')


def _conv_case(spec, batch, rng):
    channels, out_c, k, stride, pad, size = spec
    x = rng.standard_normal((batch, channels, size, size), dtype=numpy.float32)
    W = rng.standard_normal((out_c, channels, k, k), dtype=numpy.float32) * 0.05
    out = (size + 2 * pad - k) // stride + 1
    flops = 2 * batch * out_c * out * out * channels * k * k
    gemm_shape = (out_c, channels * k * k, batch * out * out)
    return x, W, flops, gemm_shape


def _ours(x, W, stride, pad):
    def forward():
        with config_module.no_backprop_mode():
            F.convolution_2d(x, W, stride=stride, pad=pad)

    def training():
        xv = variable_module.Variable(x)
        Wv = variable_module.Variable(W)
        y = F.convolution_2d(xv, Wv, stride=stride, pad=pad)
        y.grad = numpy.ones_like(y.array)
        y.backward()

    return forward, training


def _torch_funcs(torch, x, W, stride, pad):
    tx, tW = torch.from_numpy(x), torch.from_numpy(W)

    def forward():
        with torch.no_grad():
            torch.nn.functional.conv2d(tx, tW, stride=stride, padding=pad)

    def training():
        x_grad, W_grad = tx.clone().requires_grad_(), tW.clone().requires_grad_()
        y = torch.nn.functional.conv2d(x_grad, W_grad, stride=stride, padding=pad)
        y.backward(torch.ones_like(y))

    return forward, training


def _import_torch(n_threads):
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    torch.set_num_threads(n_threads)
    return torch


def section_conv(args):
    """ResNet-50 convolution layers: ours vs a plain matmul of the same GEMM (and torch)."""
    torch = None if args.no_torch else _import_torch(args.torch_threads)
    print_header(f'convolution_2d, ResNet-50 layers, batch {args.batch}, float32', args)
    columns = ['layer', 'count', 'GFLOP', 'fwd ms', 'fwd GFLOP/s', 'matmul ms', 'fwd/matmul',
               'fwd+bwd ms']
    if torch is not None:
        columns += ['torch fwd ms', 'torch fwd+bwd ms', 'fwd ours/torch']
    print('| ' + ' | '.join(columns) + ' |')
    print('|' + ' ---: |' * len(columns))
    rng = numpy.random.default_rng(0)
    totals = numpy.zeros(len(columns) - 1)
    for name, spec, count in RESNET50_CONVS:
        row = _conv_row(spec, args, rng, torch)
        totals += count * numpy.array(row)
        print(_format_row(name, count, row, torch is not None))
    _print_totals(totals, torch is not None)


def _conv_row(spec, args, rng, torch):
    x, W, flops, (m, k, n) = _conv_case(spec, args.batch, rng)
    stride, pad = spec[3], spec[4]
    a = rng.standard_normal((m, k), dtype=numpy.float32)
    b = rng.standard_normal((k, n), dtype=numpy.float32)
    forward, training = _ours(x, W, stride, pad)
    funcs = [forward, lambda: a @ b, training]
    if torch is not None:
        funcs += list(_torch_funcs(torch, x, W, stride, pad))
    times = _interleaved(funcs, args.repeat)
    row = [1.0, flops / 1e9, times[0] * 1e3, flops / times[0] / 1e9, times[1] * 1e3,
           times[0] / times[1], times[2] * 1e3]
    if torch is not None:
        row += [times[3] * 1e3, times[4] * 1e3, times[0] / times[3]]
    return row


def _interleaved(funcs, repeat, between=None):
    """Median time of each function, the runs of all functions interleaved.

    ``between``, when given, is called (untimed) after every run.
    """
    for func in funcs:
        func()
    times = [[] for _ in funcs]
    for _ in range(repeat):
        for func, bucket in zip(funcs, times):
            start = time.perf_counter()
            func()
            bucket.append(time.perf_counter() - start)
            if between is not None:
                between()
    return [statistics.median(bucket) for bucket in times]


def _format_row(name, count, row, with_torch):
    _, gflop, fwd, rate, gemm, ratio, train = row[:7]
    cells = [name, str(count), f'{gflop:.2f}', f'{fwd:.1f}', f'{rate:.1f}', f'{gemm:.1f}',
             f'{ratio:.2f}', f'{train:.1f}']
    if with_torch:
        cells += [f'{row[7]:.1f}', f'{row[8]:.1f}', f'{row[9]:.2f}']
    return '| ' + ' | '.join(cells) + ' |'


def _print_totals(totals, with_torch):
    n_layers, gflop, fwd, _, gemm, _, train = totals[:7]
    print(f'\nAll {int(n_layers)} conv layers (repeats counted): {gflop:.1f} GFLOP; forward '
          f'{fwd:.0f} ms ({gflop / fwd * 1e3:.1f} GFLOP/s), the same GEMMs as plain matmul '
          f'{gemm:.0f} ms: forward / matmul = {fwd / gemm:.2f}; forward+backward {train:.0f} '
          f'ms = {train / gemm:.2f} x matmul (backward does about 2x the forward FLOPs).')
    if with_torch:
        print(f'torch: forward {totals[7]:.0f} ms, forward+backward {totals[8]:.0f} ms; '
              f'ours / torch = {fwd / totals[7]:.2f} (forward), '
              f'{train / totals[8]:.2f} (forward+backward).')


def _cvzoo_network(batch, rng, network='resnet50'):
    """Forward and training-step callables of cvzoo's ResNet-50 (or VGG16) on one random
    batch."""
    from cvzoo.core import optimizers  # noqa: PLC0415

    if network == 'vgg16':
        from cvzoo.models.classification.vgg.vgg16 import VGG16  # noqa: PLC0415

        model = VGG16(n_class=1000)
    else:
        from cvzoo.models.classification.resnet.resnet import ResNet50  # noqa: PLC0415

        model = ResNet50(arch='fb')
    optimizer = optimizers.MomentumSGD(lr=0.01)
    optimizer.setup(model)
    x = rng.standard_normal((batch, 3, 224, 224), dtype=numpy.float32)
    t = rng.integers(0, 1000, batch).astype(numpy.int32)

    def forward():
        with config_module.using_config('train', False), config_module.no_backprop_mode():
            model(x)

    def train_step():
        model.cleargrads()
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        optimizer.update()

    return forward, train_step


def _torch_network(torch, batch, rng, network='resnet50'):
    """The same two callables for the plain PyTorch ResNet-50 (or VGG16, torchvision's layout)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if network == 'vgg16':
        import torch_vgg16  # noqa: PLC0415

        model = torch_vgg16.vgg16()
    else:
        import torch_resnet50  # noqa: PLC0415

        model = torch_resnet50.resnet50()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.from_numpy(rng.standard_normal((batch, 3, 224, 224), dtype=numpy.float32))
    t = torch.from_numpy(rng.integers(0, 1000, batch))

    def forward():
        model.eval()
        with torch.no_grad():
            model(x)

    def train_step():
        model.train()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), t).backward()
        optimizer.step()

    return forward, train_step


def _print_table_head(columns):
    """The header and alignment rows of a markdown table of right-aligned columns."""
    print('| ' + ' | '.join(columns) + ' |')
    print('|' + ' ---: |' * len(columns))


def section_network(args):
    """ResNet-50 (or VGG16) forward and training step, cvzoo vs PyTorch, and peak
    training memory."""
    torch = None if args.no_torch else _import_torch(args.torch_threads)
    title = 'VGG16' if args.network == 'vgg16' else 'ResNet-50'
    print_header(f'{title} network, 224 x 224, float32', args)
    _print_table_head(['batch', 'cvzoo forward ms', 'cvzoo train step ms', 'torch forward ms',
                       'torch train step ms', 'forward ours/torch', 'train ours/torch'])
    rng = numpy.random.default_rng(0)
    for batch in (1, 8) if args.network == 'resnet50' else (args.batch,):
        funcs = list(_cvzoo_network(batch, rng, args.network))
        if torch is not None:
            funcs += list(_torch_network(torch, batch, rng, args.network))
        times = [t * 1e3 for t in _interleaved(funcs, args.repeat)]
        cells = [str(batch), f'{times[0]:.0f}', f'{times[1]:.0f}']
        if torch is not None:
            cells += [f'{times[2]:.0f}', f'{times[3]:.0f}', f'{times[0] / times[2]:.2f}',
                      f'{times[1] / times[3]:.2f}']
        print('| ' + ' | '.join(cells) + ' |')
    if args.network == 'resnet50':
        _print_peak_memory(args, torch is not None)


def _page_faults():
    """Minor page faults of this process so far."""
    import resource  # noqa: PLC0415

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _counting_faults(func, counts):
    def run():
        before = _page_faults()
        func()
        counts.append(_page_faults() - before)
    return run


def section_inference(args):
    """ResNet-50 forwards only (an inference loop), cvzoo vs PyTorch, with page faults.

    The network section interleaves forwards with training steps, whose freed memory
    the next forward reuses; here nothing else runs, as in an evaluation script.
    """
    torch = None if args.no_torch else _import_torch(args.torch_threads)
    print_header('ResNet-50 inference loop, 224 x 224, float32', args)
    _print_table_head(['batch', 'cvzoo forward ms', 'cvzoo page faults', 'torch forward ms',
                       'torch page faults', 'ours/torch'])
    rng = numpy.random.default_rng(0)
    for batch in (1, 8):
        counts = [[], []]
        funcs = [_counting_faults(_cvzoo_network(batch, rng)[0], counts[0])]
        if torch is not None:
            funcs.append(_counting_faults(_torch_network(torch, batch, rng)[0], counts[1]))
        times = [t * 1e3 for t in _interleaved(funcs, args.repeat)]
        faults = [statistics.median(c[1:]) if len(c) > 1 else 0 for c in counts]
        cells = [str(batch), f'{times[0]:.0f}', f'{faults[0]:.0f}']
        if torch is not None:
            cells += [f'{times[1]:.0f}', f'{faults[1]:.0f}', f'{times[0] / times[1]:.2f}']
        print('| ' + ' | '.join(cells) + ' |')


def section_copy(args):
    """GB/s of a 58 MB float32 copy into memory written before and into fresh memory."""
    from cvzoo.core import parallel  # noqa: PLC0415

    print_header('Copy of 58 MB (a ResNet-50 batch-8 patch matrix), float32', args)
    source = numpy.random.default_rng(0).random(14_450_688, dtype=numpy.float32)
    written = numpy.ones_like(source)
    cases = {
        ('written', 'one thread'): lambda: numpy.copyto(written, source),
        ('written', 'parallel.copy'): lambda: parallel.copy(written, source),
        ('fresh', 'one thread'): lambda: numpy.copyto(numpy.empty_like(source), source),
        ('fresh', 'parallel.copy'): lambda: parallel.copy(numpy.empty_like(source), source),
    }
    times = _interleaved(list(cases.values()), args.repeat)
    print('| destination | threads | GB/s written |')
    print('| --- | --- | ---: |')
    for (destination, threads), seconds in zip(cases, times):
        print(f'| {destination} | {threads} | {source.nbytes / seconds / 1e9:.1f} |')


def _print_peak_memory(args, with_torch):
    import subprocess  # noqa: PLC0415

    print('\nPeak memory (max RSS) of a process that builds ResNet-50 and runs training '
          'steps at batch 8:')
    for framework in ['cvzoo'] + (['torch'] if with_torch else []):
        command = [sys.executable, os.path.abspath(__file__), '--memory-probe', framework]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        print(f'- {framework}: {result.stdout.strip()}')


def _memory_probe(framework):
    """Run in a fresh process: two training steps at batch 8, then print the max RSS."""
    rng = numpy.random.default_rng(0)
    if framework == 'torch':
        torch = _import_torch(2)
        _, train_step = _torch_network(torch, 8, rng)
    else:
        _, train_step = _cvzoo_network(8, rng)
    before = _peak_rss_kib()
    for _ in range(2):
        train_step()
    print(f'{_peak_rss_kib() / 2 ** 20:.2f} GiB (after building the model and the batch: '
          f'{before / 2 ** 20:.2f} GiB)')


def _peak_rss_kib():
    # NOTE: VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec, so a
    # child of a big parent would report the parent's peak.
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    return 0


def _busy_for(seconds):
    """Keep this thread busy (no BLAS) for ``seconds``."""
    end = time.perf_counter() + seconds
    block = numpy.ones(1 << 16, numpy.float32)
    while time.perf_counter() < end:
        block += 1


def section_threads(args):
    """The engine's threading and scratch-memory choices A/B in one process, ResNet-50.

    Variants alternate run by run on the same model and batch (``--batch``), so they see
    the same machine: threaded passes on (the default) or off (parallel.py on one thread,
    the matmul blocks unchanged), matmuls on OpenBLAS's own threads, and patch matrices
    in fresh memory instead of workspace.py's reused buffer.
    """
    from cvzoo.core import parallel, workspace  # noqa: PLC0415

    print_header(f'Threading and memory A/B, ResNet-50, batch {args.batch}, 224 x 224, '
                 f'float32', args)
    forward, train_step = _cvzoo_network(args.batch, numpy.random.default_rng(0))
    configured, reused = parallel._configured_count, workspace.scratch

    def fresh(name, shape, dtype, xp=numpy):
        return xp.empty(shape, dtype=dtype)

    variants = {
        'default': (configured, 'cvzoo', reused),
        'passes on one thread': (lambda: 1, 'cvzoo', reused),
        "matmuls on OpenBLAS's threads": (configured, 'openblas', reused),
        'patch matrices in fresh memory': (configured, 'cvzoo', fresh),
    }

    def timed(func, count, policy, scratch):
        def run():
            parallel._configured_count, workspace.scratch = count, scratch
            try:
                with config_module.using_config('blas_threading', policy):
                    func()
            finally:
                parallel._configured_count, workspace.scratch = configured, reused
        return run

    funcs = [timed(func, *variant) for func in (forward, train_step)
             for variant in variants.values()]
    # NOTE: OpenBLAS's idle threads spin for a while after a product; let them go to
    # sleep (untimed) before the next variant runs, keeping this thread busy meanwhile.
    times = [t * 1e3 for t in _interleaved(funcs, args.repeat, lambda: _busy_for(0.3))]
    print('| variant | forward ms | train step ms | forward / default | train / default |')
    print('| --- | ---: | ---: | ---: | ---: |')
    n = len(variants)
    for i, name in enumerate(variants):
        fwd, train = times[i], times[n + i]
        print(f'| {name} | {fwd:.0f} | {train:.0f} | {fwd / times[0]:.2f} | '
              f'{train / times[n]:.2f} |')


SECTIONS = {
    'copy': section_copy,
    'inference': section_inference,
    'matmul': section_matmul,
    'conv': section_conv,
    'network': section_network,
    'threads': section_threads,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--section', choices=sorted(SECTIONS) + ['all'], default='all')
    parser.add_argument('--batch', type=int, default=8)
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--network', choices=['resnet50', 'vgg16'], default='resnet50',
                        help='the network of the network section')
    parser.add_argument('--no-torch', action='store_true', help='skip the torch columns')
    parser.add_argument('--torch-threads', type=int, default=2,
                        help='torch.set_num_threads; for NumPy set OPENBLAS_NUM_THREADS')
    parser.add_argument('--memory-probe', choices=['cvzoo', 'torch'], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe:
        _memory_probe(args.memory_probe)
        return
    names = sorted(SECTIONS) if args.section == 'all' else [args.section]
    for name in names:
        SECTIONS[name](args)


if __name__ == '__main__':
    main()
