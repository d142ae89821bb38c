"""bench/count_step_calls.py: its tables on the CPU and, with kernels, on the stand-in."""

from tests.helpers.scripts import load_bench


def _table(lines, head):
    start = lines.index(head)
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith('| '):
            break
        cells = [cell.strip() for cell in line.split('|')[1:-1]]
        rows[cells[0]] = cells[1:]
    return rows


def _number(cell):
    return int(cell.replace(',', ''))


def test_cpu_counts_python_calls_per_phase_and_class(capsys):
    lines = load_bench('count_step_calls').main(['--model', 'resnet50', '--size', '32'])
    phases = _table(lines, '| phase | Python calls | kernel launches |')
    assert list(phases) == ['forward', 'backward', 'update', 'step']
    calls = [_number(phases[name][0]) for name in ('forward', 'backward', 'update')]
    assert all(n > 1000 for n in calls)
    assert _number(phases['step'][0]) == sum(calls)
    assert {kernels for _, kernels in phases.values()} == {'-'}
    classes = _table(lines, '| function class | Python calls | kernel launches |')
    assert len(classes) == 15
    assert {'Convolution2D forward', 'Convolution2D backward', '(engine)'} <= set(classes)
    assert sum(_number(n) for n, _ in classes.values()) <= _number(phases['step'][0])
    assert '| step |' in capsys.readouterr().out


def test_stand_in_counts_kernels_per_phase_and_class(stand_in):
    lines = load_bench('count_step_calls').main(
        ['--model', 'resnet50', '--size', '32', '--device', 'cuda:0', '--top', '40'])
    phases = _table(lines, '| phase | Python calls | kernel launches |')
    kernels = [_number(phases[name][1]) for name in ('forward', 'backward', 'update')]
    # at least one launch per convolution (53); the update runs once per group of
    # parameters of one dtype and device (cvzoo/core/optimizers/multi_tensor.py)
    assert kernels[0] >= 53 and kernels[1] >= 53 and kernels[2] >= 1
    assert _number(phases['step'][1]) == sum(kernels)
    classes = _table(lines, '| function class | Python calls | kernel launches |')
    # every kernel of the step is attributed to a class or to the engine
    assert sum(_number(k) for _, k in classes.values()) == sum(kernels)
