"""bench/bench_gpu.py: a quick run on the CPU (and on the CuPy stand-in's cuda:0, and
against torch when it is here) prints and writes its table, one row per workload."""

import re

import pytest

from tests.helpers.scripts import load_bench

_TIME = r'\d+(\.\d+)? m?s \(n=1\)'


def _rows(lines):
    return {line.split('|')[1].strip(): [cell.strip() for cell in line.split('|')[2:-1]]
            for line in lines
            if line.startswith('| ') and not line.startswith(('| workload', '| ---'))}


def test_quick_run_on_the_cpu_writes_the_table(tmp_path, capsys):
    out = tmp_path / 'report' / 'bench.md'
    lines = load_bench('bench_gpu').main(['--device', 'cpu', '--quick', '--no-torch',
                                          '--out', str(out)])
    rows = _rows(lines)
    assert list(rows) == ['resnet50', 'resnet50_graphed', 'ssd300', 'ssd300_vgg16', 'yolov3',
                          'ssd300_graphed', 'yolov3_graphed', 'ssd300_bf16', 'ssd300_train',
                          'mask_rcnn_fpn_train']
    for name, (cvzoo, torch, ratio, note) in rows.items():
        assert re.fullmatch(_TIME, cvzoo), (name, cvzoo)
        assert torch == ratio == '-'
    assert rows['resnet50'][3].startswith('batch 2, 32x32')
    assert rows['resnet50_graphed'][3].endswith('eager (CUDA graphs need a GPU)')
    assert rows['ssd300_graphed'][3].endswith('eager (CUDA graphs need a GPU)')
    assert rows['ssd300_bf16'][3].endswith('bfloat16 autocast')
    assert rows['ssd300_train'][3].startswith('batch 1, 300x300, 2 boxes each')
    assert rows['mask_rcnn_fpn_train'][3].startswith('1 images of 48x64 resized to')
    text = out.read_text()
    assert text == '\n'.join(lines)
    assert '- GPU: none (CPU' in text and '- PyTorch: skipped, not asked for' in text
    assert re.search(r'- commit [0-9a-f]{4,}|- commit unknown', text)
    assert text.rstrip().endswith('`python bench/bench_gpu.py --device cpu --quick --no-torch '
                                  f'--out {out}`')
    assert '| resnet50 |' in capsys.readouterr().out


def test_a_failing_workload_shows_in_its_row(monkeypatch):
    module = load_bench('bench_gpu')

    def broken(*args, **kwargs):
        raise RuntimeError('out of memory | on purpose')

    monkeypatch.setattr(module, '_resnet50', broken)
    rows = _rows(module.main(['--device', 'cpu', '--quick', '--no-torch',
                              '--parts', 'resnet50']))
    assert rows['resnet50'][0] == 'failed: RuntimeError: out of memory / on purpose'


def test_quick_run_on_the_stand_in_gpu(stand_in):
    with stand_in.count_syncs() as syncs:
        lines = load_bench('bench_gpu').main(['--device', 'cuda:0', '--quick', '--no-torch',
                                              '--parts', 'resnet50', 'resnet50_graphed'])
    rows = _rows(lines)
    for row in rows.values():
        assert re.fullmatch(_TIME, row[0]), row
    assert rows['resnet50_graphed'][3].endswith('one CUDA graph')
    assert any(kind == 'synchronize' for kind, _ in syncs)  # the timed region is synced
    assert '- GPU: unknown; device cuda:0; CuPy' in '\n'.join(lines)


@pytest.mark.reference
def test_quick_run_against_torch(torchvision):
    lines = load_bench('bench_gpu').main(['--device', 'cpu', '--quick', '--parts', 'resnet50',
                                          'ssd300_vgg16'])
    rows = _rows(lines)
    for name in ('resnet50', 'ssd300_vgg16'):
        cvzoo, torch, ratio, _ = rows[name]
        assert re.fullmatch(_TIME, cvzoo) and re.fullmatch(_TIME, torch), rows[name]
        assert re.fullmatch(r'\d+\.\d\dx', ratio)
    assert '- PyTorch ' in '\n'.join(lines)


def test_graphed_predict_rows_on_the_stand_in_gpu(stand_in):
    lines = load_bench('bench_gpu').main(['--device', 'cuda:0', '--quick', '--no-torch',
                                          '--parts', 'ssd300_graphed'])
    cvzoo, _, _, note = _rows(lines)['ssd300_graphed']
    assert re.fullmatch(_TIME, cvzoo), cvzoo
    assert note.endswith('one CUDA graph')
