"""Every train script under faults: a non-finite loss stops it, and --seed repeats a run."""

import os
import pathlib
import subprocess
import sys

import numpy
import pytest
from PIL import Image

from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.fail_on_non_number import NonFiniteError
from cvzoo.core.training.updaters import standard_updater

from tests.helpers import scripts
from tests.helpers.darknet_cfgs import TINY_YOLO_CFG

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / 'scripts'
FINAL = {'ssd': 'model_final.npz', 'yolo': 'model_final.npz', 'classifier': 'model.npz'}


def _load(name):
    return scripts.load_script(f'train_{name}')


def _voc_folder(root, n_image=4):
    rng = numpy.random.RandomState(0)
    for sub in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for i in range(n_image):
        img = numpy.full((40, 48, 3), 30, numpy.uint8)
        x_min, y_min = rng.randint(0, 20, 2)
        img[y_min:y_min + 16, x_min:x_min + 20] = 220
        Image.fromarray(img).save(root / 'JPEGImages' / f'{i}.jpg')
        (root / 'Annotations' / f'{i}.xml').write_text(
            f'<annotation><object><name>{("square", "circle")[i % 2]}</name><bndbox>'
            f'<xmin>{x_min + 1}</xmin><ymin>{y_min + 1}</ymin><xmax>{x_min + 20}</xmax>'
            f'<ymax>{y_min + 16}</ymax></bndbox></object></annotation>')
    for split in ('train', 'test'):
        (root / 'ImageSets' / 'Main' / f'{split}.txt').write_text(
            '\n'.join(map(str, range(n_image))) + '\n')
    return root


def _class_folders(root):
    rng = numpy.random.RandomState(0)
    for k, name in enumerate(('circle', 'square')):
        (root / name).mkdir(parents=True)
        for i in range(6):
            img = (rng.rand(12, 12, 3) * 60 + 100 * k).astype(numpy.uint8)
            Image.fromarray(img).save(root / name / f'{i}.png')
    return root


def _args(name, tmp_path, out, iteration, seed=0):
    data = tmp_path / 'data'
    common = ['--iteration', str(iteration), '--out', str(out), '--seed', str(seed)]
    if name == 'classifier':
        if not data.exists():
            _class_folders(data)
        return ['--dataset', str(data), '--batchsize', '4', '--insize', '8'] + common
    if not data.exists():
        _voc_folder(data)
    if name == 'ssd':
        return ['--dataset', str(data), '--model', 'ssd_tiny', '--insize', '64',
                '--batchsize', '2', '--optimizer', 'adam'] + common
    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_YOLO_CFG)
    return ['--cfg', str(cfg), '--dataset', str(data), '--batchsize', '2',
            '--insize', '32'] + common


def _poison_at(monkeypatch, iteration):
    """Iteration ``iteration`` (1-based) starts with a NaN parameter: its loss is NaN."""
    original = standard_updater.StandardUpdater.update_core

    def update_core(self):
        if self.iteration + 1 == iteration:  # counted up after update_core
            param = next(iter(self.get_optimizer('main').target.params()))
            param.array[...] = numpy.nan
        original(self)
    monkeypatch.setattr(standard_updater.StandardUpdater, 'update_core', update_core)


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'classifier'])
def test_non_finite_loss_stops_and_keeps_the_last_good_snapshot(name, tmp_path, monkeypatch):
    out = tmp_path / 'out'
    _poison_at(monkeypatch, 3)
    with pytest.raises(NonFiniteError, match="'main/loss'.*iteration 3") as info:
        _load(name).main(_args(name, tmp_path, out, 5))
    assert str(out) in str(info.value)
    assert not (out / FINAL[name]).exists()
    snapshots = sorted(p.name for p in out.glob('snapshot_iter_*'))
    assert 'snapshot_iter_2' in snapshots and 'snapshot_iter_3' not in snapshots
    for key, value in npz.read_npz(out / 'snapshot_iter_2').items():
        if numpy.issubdtype(value.dtype, numpy.floating) and key.startswith('updater/model:main'):
            assert numpy.isfinite(value).all(), key


def test_non_finite_loss_exits_non_zero_with_a_clear_message(tmp_path):
    args = _args('yolo', tmp_path, tmp_path / 'out', 4)
    code = (
        'import runpy, sys, numpy\n'
        'from cvzoo.core.training.updaters import standard_updater as u\n'
        'original = u.StandardUpdater.update_core\n'
        'def poisoned(self):\n'
        '    if self.iteration == 1:\n'
        '        next(iter(self.get_optimizer("main").target.params())).array[...] = numpy.nan\n'
        '    original(self)\n'
        'u.StandardUpdater.update_core = poisoned\n'
        f'sys.argv = ["train_yolo.py"] + {args!r}\n'
        f'runpy.run_path({str(SCRIPTS / "train_yolo.py")!r}, run_name="__main__")\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=300, env={**os.environ, 'MPLBACKEND': 'Agg'})
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith('train_yolo.py: error: FailOnNonNumber') and 'main/loss' in last
    assert 'Traceback' not in result.stderr
    assert not (tmp_path / 'out' / 'model_final.npz').exists()


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'classifier'])
def test_same_seed_gives_the_same_model(name, tmp_path):
    runs = []
    for run in ('a', 'b', 'c'):
        seed = 1 if run == 'c' else 0
        numpy.random.seed(100 + len(runs))  # what came before must not matter
        _load(name).main(_args(name, tmp_path, tmp_path / run, 3, seed=seed))
        runs.append(npz.read_npz(tmp_path / run / FINAL[name]))
    first, second, other = runs
    assert first.keys() == second.keys()
    for key in first:
        numpy.testing.assert_array_equal(first[key], second[key], err_msg=key)
    assert any(not numpy.array_equal(first[key], other[key]) for key in first
               if first[key].dtype.kind == 'f')


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'faster_rcnn', 'classifier'])
def test_every_train_script_checks_the_loss_and_seeds_numpy(name):
    """The wiring the runs above test, in every script (Faster R-CNN is too big to run)."""
    source = (SCRIPTS / f'train_{name}.py').read_text()
    assert "FailOnNonNumber(keys=('main/loss',), check_params=False)" in source
    assert 'numpy.random.seed(args.seed' in source
    assert 'except fail_on_non_number.NonFiniteError' in source
