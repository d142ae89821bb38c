"""Python calls and kernel launches of one training step, by phase and by function class.

One training iteration of a model from ``get_model`` (random weights; forward and
softmax cross-entropy, then ``cleargrads`` and backward, then a MomentumSGD update with
WeightDecay, as scripts/train_classifier.py runs it) is counted after one warm-up step:

- Python calls: the ``'call'`` (Python functions) and ``'c_call'`` (builtins and C
  methods) events of ``sys.setprofile``. They barely depend on the batch or image size
  when NumPy's BLAS runs on one thread (``--threads 1``, the default: cvzoo then runs
  products and element-wise passes whole, as on a GPU); with more, large products and
  passes are cut into blocks shared among threads, a number of calls that grows with
  the size and varies from run to run;
- kernel launches: on the CuPy stand-in (``--fake-cuda``) what its ``count_kernels``
  counts (ufunc calls, reductions, copies, products, elementwise and reduction kernels);
  on the CPU or a real GPU they are not counted ('-').

On the stand-in, what runs inside it is not counted: each entry into it from outside
counts as one call, as a call into CuPy's compiled code would on a GPU. The Python calls
are then an estimate of a GPU step's (an upper one: the stand-in's attributes and
operators are Python functions, CuPy's are not).

The second table gives the 15 function classes (``FunctionNode`` subclasses, forward and
backward apart) that make the most Python calls; a call belongs to the outermost function
running when it is made, so a backward that applies other functions counts their calls
too; '(engine)' is what runs outside any function (links, the backward loop, the update).

    python bench/count_step_calls.py --model resnet50
    python bench/count_step_calls.py --model resnet50 --device cuda:0 --fake-cuda
"""

import argparse
import collections
import pathlib
import subprocess
import sys

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

PHASES = ('forward', 'backward', 'update')
ENGINE = '(engine)'


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', default='resnet50', choices=['resnet50', 'vgg16'])
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--batch', type=int, default=2)
    parser.add_argument('--size', type=int, default=64)
    parser.add_argument('--top', type=int, default=15)
    parser.add_argument('--threads', type=int, default=1,
                        help="NumPy's BLAS threads while counting (0: leave as it is)")
    parser.add_argument('--fake-cuda', action='store_true',
                        help='run cuda:N on cvzoo.testing.cupy_stand_in (counts kernels)')
    return parser


class StepCounter:
    """Counts Python calls (and stand-in kernels) while active, per function class.

    Attributes:
        calls (Counter): ``{label: Python calls}``, label 'Class forward', 'Class
            backward' or '(engine)'.
        kernels (Counter): ``{label: kernel launches}`` (empty without the stand-in).
    """

    def __init__(self, kernel_counter=None, collapsed_file=None):
        from cvzoo.core import backprop, function_node  # noqa: PLC0415

        self._collapsed_file = collapsed_file  # code in it counts as one call per entry
        self._inside = 0  # depth of the frames of collapsed_file now running
        self.calls = collections.Counter()
        self.kernels = collections.Counter()
        self._kernel_counter = kernel_counter
        self._apply = function_node.FunctionNode.apply.__code__
        self._backward = backprop._call_backward.__code__
        self._stack = []  # (code, label, kernels at entry) of the outermost function

    def _kernel_total(self):
        return 0 if self._kernel_counter is None else sum(self._kernel_counter.values())

    def _label(self):
        return self._stack[0][1] if self._stack else ENGINE

    def __call__(self, frame, event, arg):
        if self._inside:
            if frame.f_code.co_filename == self._collapsed_file:
                self._inside += {'call': 1, 'return': -1}.get(event, 0)
            return
        if event == 'call' and frame.f_code.co_filename == self._collapsed_file:
            self._inside = 1
            self.calls[self._label()] += 1
            return
        if event == 'c_call':
            self.calls[self._label()] += 1
        elif event == 'call':
            code = frame.f_code
            if not self._stack and code is self._apply:
                self._enter(code, type(frame.f_locals['self']).__name__ + ' forward')
            elif not self._stack and code is self._backward:
                node = frame.f_locals['function_node']
                self._enter(code, type(node).__name__ + ' backward')
            self.calls[self._label()] += 1
        elif event == 'return' and self._stack and frame.f_code is self._stack[0][0]:
            code, label, start = self._stack.pop()
            self.kernels[label] += self._kernel_total() - start

    def _enter(self, code, label):
        self._stack.append((code, label, self._kernel_total()))

    def kernels_outside_functions(self, total):
        """Attribute to '(engine)' the kernels of ``total`` no function launched."""
        self.kernels[ENGINE] += total - sum(self.kernels.values())


def _setup(args):
    import cvzoo.core.functions as F  # noqa: PLC0415
    from cvzoo.core import backend, optimizers  # noqa: PLC0415
    from cvzoo.models import get_model  # noqa: PLC0415

    device = backend.get_device(args.device)
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((args.batch, 3, args.size, args.size)).astype(numpy.float32)
    t = rng.integers(0, 10, args.batch).astype(numpy.int32)
    x, t = backend.to_device(x, device), backend.to_device(t, device)
    model = get_model(args.model, n_class=10).to_device(device)
    optimizer = optimizers.MomentumSGD(lr=0.01, momentum=0.9).setup(model)
    optimizer.add_hook(optimizers.WeightDecay(1e-4))
    state = {}

    def forward():
        state['loss'] = F.softmax_cross_entropy(model(x), t)

    def backward():
        model.cleargrads()
        state.pop('loss').backward()

    def update():
        optimizer.update()

    return device, dict(zip(PHASES, (forward, backward, update)))


def count_step(args):
    """Count one step after a warm-up; return ``{phase: (calls Counter, kernels Counter)}``."""
    from cvzoo.core import gemm  # noqa: PLC0415

    control = gemm.thread_control() if args.threads > 0 else None
    limiter = None if control is None else control.limit(args.threads)
    try:
        return _count_step(args)
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def _count_step(args):
    device, phases = _setup(args)
    with device:
        for run in phases.values():
            run()
    stand_in = _stand_in_if_installed() if device.kind == 'cuda' else None
    result = {}
    with device:
        for name, run in phases.items():
            result[name] = _count_phase(run, stand_in)
    return result


def _stand_in_if_installed():
    from cvzoo.testing import cupy_stand_in  # noqa: PLC0415

    return cupy_stand_in if cupy_stand_in.is_installed() else None


def _count_phase(run, stand_in):
    if stand_in is None:
        counter = StepCounter()
        _profiled(run, counter)
        return counter.calls, None
    with stand_in.count_kernels() as kinds:
        counter = StepCounter(kinds, stand_in.__file__)
        _profiled(run, counter)
    counter.kernels_outside_functions(sum(kinds.values()))
    return counter.calls, counter.kernels


def _profiled(run, counter):
    sys.setprofile(counter)
    try:
        run()
    finally:
        sys.setprofile(None)


def totals(result):
    """``{phase: (Python calls, kernel launches or None)}`` and a 'step' total."""
    rows = {}
    for name, (calls, kernels) in result.items():
        rows[name] = (sum(calls.values()), None if kernels is None else sum(kernels.values()))
    kernel_counts = [k for _, k in rows.values()]
    rows['step'] = (sum(c for c, _ in rows.values()),
                    None if None in kernel_counts else sum(kernel_counts))
    return rows


def _stand_in_note(args):
    if args.device == 'cpu' or _stand_in_if_installed() is None:
        return ''
    return ' (CuPy stand-in)'


def _cell(value):
    return '-' if value is None else f'{value:,}'


def report(args, result):
    """The two markdown tables, as a list of lines."""
    head = (f'{args.model}, batch {args.batch}, {args.size}x{args.size}, device '
            f'{args.device}{_stand_in_note(args)}, BLAS threads {args.threads or "as set"}, '
            f'commit {_commit()}')
    lines = [head, '',
             '| phase | Python calls | kernel launches |', '| --- | ---: | ---: |']
    for name, (calls, kernels) in totals(result).items():
        lines.append(f'| {name} | {_cell(calls)} | {_cell(kernels)} |')
    calls, kernels = collections.Counter(), collections.Counter()
    for phase_calls, phase_kernels in result.values():
        calls.update(phase_calls)
        kernels.update(phase_kernels or {})
    counted = any(kernels_ is not None for _, kernels_ in result.values())
    lines += ['', '| function class | Python calls | kernel launches |', '| --- | ---: | ---: |']
    for label, n in calls.most_common(args.top):
        lines.append(f'| {label} | {n:,} | {_cell(kernels[label] if counted else None)} |')
    return lines


def _commit():
    try:
        out = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                             capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'
    return out.stdout.strip()


def main(argv=None):
    """Count, print the tables and return their lines."""
    args = _parser().parse_args(argv)
    if args.fake_cuda:
        from cvzoo.testing import cupy_stand_in  # noqa: PLC0415

        cupy_stand_in.install()
    lines = report(args, count_step(args))
    print('\n'.join(lines))
    return lines


if __name__ == '__main__':
    main()
