"""Budgets of a ResNet-50 training step: Python calls on the CPU, Python calls and kernel
launches on the CuPy stand-in, per phase, counted by bench/count_step_calls.py (batch 1,
32 x 32, NumPy's BLAS on one thread; MomentumSGD with WeightDecay). A GPU step is bound by
the host, so these counts are its cost (on the stand-in each entry into it counts as one
call, as a call into CuPy's compiled code: an estimate of a GPU step's calls); the budgets
are the measured counts plus 5%, so that they cannot creep back. Lower a budget when a
change lowers its count.

Measured (before: commit 7a57e4b; after: the engine's bookkeeping in fewer calls, the
first-order backward without inner nodes, relu(a + b) as one node, batch normalisation,
relu's gradient and col2im in fewer GPU kernels; the update as one multi-tensor update of
flat buffers with the weight decay folded in, cvzoo.core.optimizers.multi_tensor; on a GPU
no device context entered when the arrays' GPU is already current, own kernels checking
the device in one pass, the cuDNN frontend's answer cached). The whole step went from
61,192 Python calls to 26,026 on the CPU and from 94,734 to 37,071 on the stand-in:

=========  ===================  ========================  ====================
phase      Python calls (CPU)   Python calls (stand-in)   kernels (stand-in)
=========  ===================  ========================  ====================
forward    22,107 -> 9,705      33,614 -> 14,915          1,202 -> 513
backward   28,563 -> 14,900     42,709 -> 20,533          1,345 -> 618
update     10,522 -> 1,421      18,411 -> 1,623           483 -> 4
=========  ===================  ========================  ====================
"""

import os
import subprocess
import sys

import pytest

from tests.helpers.scripts import BENCH, ROOT, load_bench

MARGIN = 1.05
PYTHON_CALLS = {'forward': 9_705, 'backward': 14_900, 'update': 1_421}
STAND_IN_PYTHON_CALLS = {'forward': 14_915, 'backward': 20_533, 'update': 1_623}
KERNELS = {'forward': 513, 'backward': 618, 'update': 4}
ARGS = ['--model', 'resnet50', '--batch', '1', '--size', '32', '--threads', '1']


def _phase_rows(lines):
    """``{phase: [Python calls, kernels]}`` from the first table of the script's output."""
    rows = {}
    for line in lines:
        cells = [cell.strip() for cell in line.split('|')[1:-1]]
        if len(cells) == 3 and cells[0] in ('forward', 'backward', 'update', 'step'):
            rows.setdefault(cells[0], [int(c.replace(',', '')) if c != '-' else None
                                       for c in cells[1:]])
    return rows


@pytest.fixture(scope='module')
def cpu_counts():
    # NOTE: in a fresh interpreter: where CuPy (or its stand-in) is loaded, every function
    # call also checks devices, which is not what a CPU-only process pays.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(BENCH / 'count_step_calls.py'), *ARGS],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return _phase_rows(out.stdout.splitlines())


def _assert_within(count, measured, what, command):
    """``count`` (of one ResNet-50 step) is at most the budget: ``measured`` plus 5%."""
    budget = int(measured * MARGIN)
    assert count <= budget, (f'{what}: {count:,} per ResNet-50 step, over the budget of '
                             f'{budget:,} (measured {measured:,}); see {command}')


@pytest.mark.parametrize('phase', ['forward', 'backward', 'update'])
def test_python_calls_stay_within_budget(cpu_counts, phase):
    _assert_within(cpu_counts[phase][0], PYTHON_CALLS[phase], f'{phase}: Python calls',
                   'python bench/count_step_calls.py')


def test_the_whole_step_makes_at_most_half_the_original_python_calls(cpu_counts):
    original = 22_107 + 28_563 + 10_522  # commit 7a57e4b
    assert cpu_counts['step'][0] <= original // 2, cpu_counts


@pytest.fixture(scope='module')
def stand_in_counts():
    """``{phase: (Python calls, kernel launches)}`` of the step on the stand-in's cuda:0."""
    from cvzoo.testing import cupy_stand_in

    if not cupy_stand_in.is_installed():
        pytest.skip('needs the CuPy stand-in (pytest --fake-cuda)')
    module = load_bench('count_step_calls')
    args = module._parser().parse_args(ARGS + ['--device', 'cuda:0'])
    return module.totals(module.count_step(args))


@pytest.mark.parametrize('phase', ['forward', 'backward', 'update'])
def test_stand_in_python_calls_stay_within_budget(stand_in_counts, phase):
    _assert_within(stand_in_counts[phase][0], STAND_IN_PYTHON_CALLS[phase],
                   f'{phase}: Python calls on the stand-in',
                   'python bench/count_step_calls.py --device cuda:0 --fake-cuda')


def test_kernel_launches_stay_within_budget(stand_in_counts):
    for phase, measured in KERNELS.items():
        _assert_within(stand_in_counts[phase][1], measured,
                       f'{phase}: kernel launches on the stand-in',
                       'python bench/count_step_calls.py --device cuda:0 --fake-cuda')
