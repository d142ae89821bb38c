"""README.md's commands do what it says: the first command prints the output shown under
it, and "Train a detector on your own images", run exactly as printed, ends with a model
that finds the shapes."""

import json
import os
import pathlib
import re
import resource
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy
import pytest

from cvzoo import errors
from cvzoo.cli import main
from cvzoo.utils import bbox as bbox_utils
from cvzoo.utils import download

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / 'README.md').read_text()


def _code_blocks(text, language):
    return re.findall(rf'^```{language}\n(.*?)^```', text, flags=re.MULTILINE | re.DOTALL)


def _commands(block):
    """The commands of a bash block: continuation lines joined, comments dropped."""
    joined = block.replace('\\\n', ' ')
    commands = []
    for line in joined.splitlines():
        line = line.split(' #', 1)[0].strip()
        if line and not line.startswith('#'):
            commands.append(shlex.split(line))
    return commands


def _section(title):
    return README.split(f'## {title}\n', 1)[1].split('\n## ', 1)[0]


def test_the_first_command_is_predict_on_the_shipped_sample(monkeypatch, tmp_path, capsys):
    """The first `cvzoo` command runs with no network and prints the README's output."""
    first = [c for block in _code_blocks(README, 'bash') for c in _commands(block)
             if c[0] == 'cvzoo'][0]
    assert first == ['cvzoo', 'predict']
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)

    def refuse(url, *args, **kwargs):
        raise errors.DownloadError(f'{url}: no network in this test')

    monkeypatch.setattr(download, 'download', refuse)
    assert main.main(first[1:]) == 0
    printed = capsys.readouterr().out.splitlines()
    shown = README.split('cvzoo predict\n```\n\n```\n', 1)[1].split('```', 1)[0].splitlines()
    # the first line names the picture where cvzoo is installed, which varies
    heading = 'cvzoo/models/weights/embedded/dog.jpg: 4 detections: score, label, box (x_min, ' \
        'y_min, x_max, y_max) in pixels'
    assert printed[0].endswith(heading)
    assert shown[0].endswith(heading)
    assert printed[1:] == shown[1:]


def test_every_cvzoo_command_outside_the_walkthrough_runs_as_printed(tmp_path):
    """The README's `cvzoo` commands before the walkthrough run in a fresh folder as
    printed, with nothing but the installed package (no picture or file of the clone)."""
    top = README.split('## Train a detector on your own images', 1)[0]
    commands = [c for block in _code_blocks(top, 'bash') for c in _commands(block)
                if c[0] == 'cvzoo']
    assert len(commands) >= 2
    env = {k: v for k, v in os.environ.items() if k != 'CVZOO_WEIGHTS_MIRROR'}
    env.update(CVZOO_HOME=str(tmp_path / 'home'), PYTHONPATH=str(ROOT))
    for command in commands:
        result = subprocess.run(_local(command), cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, (command, result.stderr[-3000:])
        if '--out' in command:
            assert (tmp_path / command[command.index('--out') + 1]).is_file()


def test_readme_points_at_nothing_outside_the_repository():
    """A clone has no folder beside it: the README and docs name none."""
    for path in [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]:
        outside = re.findall(r'(?<![.\w])\.\./\S*', path.read_text())
        assert not outside, (path, outside)


def _walkthrough_commands():
    block = _code_blocks(_section('Train a detector on your own images'), 'bash')[0]
    return _commands(block)


def _local(command):
    """The command run by this interpreter on this tree (`python`, `cvzoo`)."""
    if command[0] == 'python':
        return [sys.executable] + command[1:]
    if command[0] == 'cvzoo':
        return [sys.executable, '-m', 'cvzoo'] + command[1:]
    raise AssertionError(f'README walkthrough: unexpected command {command}')


def _gt(folder, image_path):
    image_id = pathlib.Path(image_path).stem
    root = ET.parse(folder / 'Annotations' / f'{image_id}.xml').getroot()
    boxes = [[float(o.find('bndbox').find(k).text) for k in ('xmin', 'ymin', 'xmax', 'ymax')]
             for o in root.iter('object')]
    names = [o.find('name').text for o in root.iter('object')]
    # VOC's 1-based inclusive pixel indices as continuous (x_min, y_min, x_max, y_max)
    return numpy.array(boxes, numpy.float32) - [1, 1, 0, 0], names


def _printed_boxes(out):
    rows = re.findall(r'^\s+([0-9.]+)\s+(\S+)\s+\(([^)]*)\)', out, flags=re.MULTILINE)
    boxes = numpy.array([[float(v) for v in coords.split(',')] for _, _, coords in rows],
                        numpy.float32).reshape(-1, 4)
    return boxes, [name for _, name, _ in rows]


@pytest.mark.slow
def test_the_walkthrough_trains_a_detector_that_finds_the_shapes(tmp_path):
    commands = _walkthrough_commands()
    assert [c[:2] for c in commands] == [
        ['python', 'scripts/make_shapes_dataset.py'], ['python', 'scripts/train_yolo.py'],
        ['python', 'scripts/eval_detection.py'], ['cvzoo', 'predict']]
    (tmp_path / 'scripts').symlink_to(ROOT / 'scripts')
    env = {k: v for k, v in os.environ.items() if k != 'CVZOO_WEIGHTS_MIRROR'}
    env.update(CVZOO_HOME=str(tmp_path / 'home'), PYTHONPATH=str(ROOT))
    outputs = []
    start = time.perf_counter()
    for command in commands:
        result = subprocess.run(_local(command), cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=1200)
        assert result.returncode == 0, (command, result.stderr[-3000:])
        print(shlex.join(command), result.stdout[-1500:], sep='\n')
        outputs.append(result.stdout)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f'README walkthrough: {time.perf_counter() - start:.0f} s, CPU time '
          f'{cpu.ru_utime + cpu.ru_stime:.0f} s')

    # train_yolo.py's last line and eval_detection.py's report: mAP@0.5 on the test split
    train_map = json.loads(outputs[1].strip().splitlines()[-1])['map']
    eval_map = float(re.search(r'^\s*mAP\s+([0-9.]+)', outputs[2], re.MULTILINE)[1]) / 100
    assert train_map >= 0.5, outputs[1][-2000:]
    assert eval_map == pytest.approx(train_map, abs=0.005)

    # cvzoo predict finds each shape of its picture (IoU >= 0.5, right name) and draws it
    predict = commands[3]
    folder = tmp_path / commands[0][commands[0].index('--out') + 1]
    gt_bbox, gt_names = _gt(folder, predict[2])
    bbox, names = _printed_boxes(outputs[3])
    iou = bbox_utils.bbox_iou(gt_bbox, bbox) if len(bbox) else numpy.zeros((len(gt_bbox), 0))
    for i, name in enumerate(gt_names):
        hits = [j for j in range(len(names)) if names[j] == name and iou[i, j] >= 0.5]
        assert hits, (name, gt_bbox[i], outputs[3])
    assert (tmp_path / predict[predict.index('--out') + 1]).is_file()
