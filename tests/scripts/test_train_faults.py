"""Every train script under faults: a non-finite loss stops it, and --seed repeats a run."""

import os
import pathlib
import subprocess
import sys

import numpy
import pytest

from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.fail_on_non_number import NonFiniteError
from tests.helpers.train_runs import FINAL, load_train_script, poison_at, train_args

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / 'scripts'


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'classifier'])
def test_non_finite_loss_stops_and_keeps_the_last_good_snapshot(name, tmp_path, monkeypatch):
    out = tmp_path / 'out'
    poison_at(monkeypatch, 3)
    with pytest.raises(NonFiniteError, match="'main/loss'.*iteration 3") as info:
        load_train_script(name).main(train_args(name, tmp_path, out, 5))
    assert str(out) in str(info.value)
    assert not (out / FINAL[name]).exists()
    snapshots = sorted(p.name for p in out.glob('snapshot_iter_*'))
    assert 'snapshot_iter_2' in snapshots and 'snapshot_iter_3' not in snapshots
    for key, value in npz.read_npz(out / 'snapshot_iter_2').items():
        if numpy.issubdtype(value.dtype, numpy.floating) and key.startswith('updater/model:main'):
            assert numpy.isfinite(value).all(), key


def test_non_finite_loss_exits_non_zero_with_a_clear_message(tmp_path):
    args = train_args('yolo', tmp_path, tmp_path / 'out', 4)
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
        load_train_script(name).main(train_args(name, tmp_path, tmp_path / run, 3, seed=seed))
        runs.append(npz.read_npz(tmp_path / run / FINAL[name]))
    first, second, other = runs
    assert first.keys() == second.keys()
    for key in first:
        numpy.testing.assert_array_equal(first[key], second[key], err_msg=key)
    assert any(not numpy.array_equal(first[key], other[key]) for key in first
               if first[key].dtype.kind == 'f')


@pytest.mark.parametrize('name', ['ssd', 'yolo', 'faster_rcnn', 'classifier', 'mask_rcnn'])
def test_every_train_script_runs_cvzoo_train(name):
    """The wiring the runs above test, in every script (Faster R-CNN is too big to run):
    cvzoo.cli.train.run seeds NumPy and trains through cvzoo.training.train, which stops
    at a non-finite loss; train_options.run ends the script in one line."""
    source = (SCRIPTS / f'train_{name}.py').read_text()
    assert 'train.run(args' in source
    assert 'train_options.run(main' in source
