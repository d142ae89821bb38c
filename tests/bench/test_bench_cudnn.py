"""bench/bench_cudnn.py --small: on the CPU (cuDNN never runs) and on the CuPy stand-in
with the fake cuDNN frontend (every check runs through cvzoo.core.cudnn and matches)."""

import re
import sys

from tests.helpers.scripts import load_bench


def _check_rows(lines):
    return {line.split('|')[1].strip(): [c.strip() for c in line.split('|')[2:-1]]
            for line in lines if line.startswith('| ') and '|' in line[2:]
            and not line.startswith(('| check', '| ---', '| ResNet', '| resnet'))}


def test_small_run_on_the_cpu_never_calls_cudnn(tmp_path):
    out = tmp_path / 'cudnn.md'
    lines, status = load_bench('bench_cudnn').main(['--device', 'cpu', '--small',
                                                    '--benchmark', '--out', str(out)])
    rows = _check_rows(lines)
    assert len(rows) == 13 and all(r[1] == 'ok' and r[2] == '0' for r in rows.values())
    assert status == 0
    assert out.read_text() == '\n'.join(lines) + '\n'
    timed = [line.split('|')[1].strip() for line in lines
             if re.match(r'\| resnet50 .* ms \(n=1\) \| \d+\.\d\dx \|$', line)]
    assert timed == ['resnet50 never', 'resnet50 auto', 'resnet50 auto + benchmark']
    _, status = load_bench('bench_cudnn').main(['--device', 'cpu', '--small',
                                                '--require-cudnn'])
    assert status == 1


def test_small_run_on_the_stand_in_goes_through_cudnn(stand_in, monkeypatch):
    from cvzoo.core.cudnn import availability, plans
    from cvzoo.testing import cudnn_stand_in

    fake = cudnn_stand_in.make_module()
    monkeypatch.setitem(sys.modules, 'cudnn', fake)
    availability.forget_frontend()
    plans.clear()
    try:
        lines, status = load_bench('bench_cudnn').main(['--device', 'cuda:0', '--small',
                                                        '--require-cudnn'])
    finally:
        availability.forget_frontend()
        plans.clear()
    rows = _check_rows(lines)
    assert status == 0, lines
    assert all(r[1] == 'ok' and int(r[2]) > 0 and r[3] == '0' for r in rows.values()), rows
    executed = {e['operation'] for e in fake.log if e['event'] == 'execute'}
    assert executed == {'conv_fprop', 'conv_dgrad', 'conv_wgrad', 'batchnorm',
                        'batchnorm_backward', 'batchnorm_inference', 'pooling_max',
                        'pooling_average_include_padding', 'pooling_average_exclude_padding'}
