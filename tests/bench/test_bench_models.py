"""bench/bench_models.py: a detection run of ssd_tiny end to end (child processes, table,
docs), a failing model shown in its row, and the docs update that keeps other parts."""

import os
import pathlib
import re
import subprocess
import sys

from tests.helpers.scripts import load_bench

BENCH = pathlib.Path(__file__).resolve().parents[2] / 'bench'


def test_detection_run_of_ssd_tiny_and_a_failing_model(tmp_path):
    docs = tmp_path / 'benchmarks.md'
    docs.write_text('# Benchmarks\n\n## Models\n\n### Classification\n\nkept\n\n'
                    '## Core engine\n\nalso kept\n')
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    result = subprocess.run(
        [sys.executable, str(BENCH / 'bench_models.py'), '--task', 'detection', '--models',
         'ssd_tiny', 'no_such_model', '--runs', '1', '--write-docs', '--docs', str(docs)],
        capture_output=True, text=True, env=env, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = {line.split('|')[1].strip(): line for line in result.stdout.splitlines()
            if line.startswith('| ') and not line.startswith('| model')}
    cells = [cell.strip() for cell in rows['ssd_tiny'].split('|')[1:-1]]
    assert len(cells) == 11
    _, weights, params, network_input, vis, vis_post, ev, ev_post, detections, train, rss = cells
    assert weights == 'random, 20 classes' and params == '0.8 M' and network_input == '96x96'
    for total, post in ((vis, vis_post), (ev, ev_post)):
        assert re.fullmatch(r'\d+(\.\d+)? m?s', total)
        share = re.fullmatch(r'\d+(\.\d+)? m?s \((<0\.1|\d+\.\d)%\)', post).group(2)
        assert share == '<0.1' or 0 < float(share) < 100  # decode + NMS is part of predict()
    assert re.fullmatch(r'\d+ / \d+', detections)
    assert re.fullmatch(r'\d+(\.\d+)? m?s \(SSDTrainChain\)', train)
    assert re.fullmatch(r'\d+ / \d+ MB', rss)
    assert "failed: cvzoo.errors.UsageError: name: no model 'no_such_model'" in rows[
        'no_such_model']
    text = docs.read_text()
    assert '### Classification\n\nkept\n\n### Detection\n\n' in text
    assert text.index('### Detection') < text.index('## Core engine')
    assert text.endswith('## Core engine\n\nalso kept\n')
    assert ('python bench/bench_models.py --task detection --models ssd_tiny no_such_model '
            '--runs 1 --write-docs\n') in text  # without --docs


def test_replace_models_part_replaces_only_its_part():
    replace = load_bench('bench_models').replace_models_part
    text = '# B\n\n## Models\n\nintro\n\n### Detection\n\nold\n\n### Other\n\no\n\n## Next\n\nn\n'
    assert replace(text, 'Detection', 'new\n') == (
        '# B\n\n## Models\n\nintro\n\n### Detection\n\nnew\n\n### Other\n\no\n\n## Next\n\nn\n')
    assert replace(text, 'Third', 't') == (
        '# B\n\n## Models\n\nintro\n\n### Detection\n\nold\n\n### Other\n\no\n\n'
        '### Third\n\nt\n\n## Next\n\nn\n')
    assert replace('# B\n', 'Detection', 'd') == '# B\n\n## Models\n\n### Detection\n\nd\n'


def test_mirrored_key_takes_voc_first_and_needs_every_file(tmp_path, monkeypatch):
    from cvzoo.models import zoo

    workloads = load_bench('model_workloads')
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    assert workloads.mirrored_key('yolo_fastest') is None
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(tmp_path))
    entries = zoo.get_model_class('yolo_fastest').weights
    for key in ('coco', 'voc'):
        for weight_file in entries[key].all_files:
            (tmp_path / weight_file.file_name).write_bytes(b'')
    assert workloads.mirrored_key('yolo_fastest') == 'voc'
    (tmp_path / entries['voc'].all_files[-1].file_name).unlink()
    assert workloads.mirrored_key('yolo_fastest') == 'coco'
    assert workloads.mirrored_key('ssd_tiny') is None  # no weights entries


def test_instance_segmentation_run_of_a_small_fcis():
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    result = subprocess.run(
        [sys.executable, str(BENCH / 'bench_models.py'), '--task', 'instance_segmentation',
         '--models', 'fcis_resnet101', '--runs', '1', '--small'],
        capture_output=True, text=True, env=env, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    assert 'mask paste' in result.stdout.split('| model |')[1].splitlines()[0]
    row = next(line for line in result.stdout.splitlines() if line.startswith('| fcis'))
    cells = [cell.strip() for cell in row.split('|')[1:-1]]
    assert len(cells) == 11
    _, weights, params, network_input, vis, vis_paste, ev, ev_paste, instances, train, rss = \
        cells
    assert weights == 'random, 2 classes (small)' and network_input == '64x85'
    assert re.fullmatch(r'\d+\.\d M', params)
    for total, paste in ((vis, vis_paste), (ev, ev_paste)):
        assert re.fullmatch(r'\d+(\.\d+)? m?s', total)
        share = re.fullmatch(r'\d+(\.\d+)? m?s \((<0\.1|\d+\.\d)%\)', paste).group(2)
        assert share == '<0.1' or 0 < float(share) < 100  # the paste is part of predict()
    assert re.fullmatch(r'\d+ / \d+', instances)
    assert re.fullmatch(r'\d+(\.\d+)? m?s \(FCISTrainChain\)', train)
    assert re.fullmatch(r'\d+ / \d+ MB', rss)


def test_keypoint_detection_run_of_a_small_keypoint_rcnn():
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    result = subprocess.run(
        [sys.executable, str(BENCH / 'bench_models.py'), '--task', 'keypoint_detection',
         '--runs', '1', '--small'],
        capture_output=True, text=True, env=env, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    assert 'heatmap decoding' in result.stdout.split('| model |')[1].splitlines()[0]
    row = next(line for line in result.stdout.splitlines()
               if line.startswith('| keypointrcnn_resnet50_fpn'))
    cells = [cell.strip() for cell in row.split('|')[1:-1]]
    assert len(cells) == 11
    *_, vis, vis_decoding, ev, ev_decoding, people, train, rss = cells
    for total, decoding in ((vis, vis_decoding), (ev, ev_decoding)):
        assert re.fullmatch(r'\d+(\.\d+)? m?s', total)
        share = re.fullmatch(r'\d+(\.\d+)? m?s \((<0\.1|\d+\.\d)%\)', decoding).group(2)
        assert share == '<0.1' or 0 < float(share) < 100  # the decoding is part of predict()
    assert re.fullmatch(r'\d+ / \d+', people)
    assert re.fullmatch(r'\d+(\.\d+)? m?s \(KeypointRCNNTrainChain\)', train)
    assert re.fullmatch(r'\d+ / \d+ MB', rss)
