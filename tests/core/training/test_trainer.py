import time

import pytest

from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.snapshots import snapshot


def test_snapshots_do_not_inflate_elapsed_time(make_trainer, tmp_path):
    trainer = make_trainer(stop=(6, 'iteration'))
    trainer.extend(snapshot(), trigger=(1, 'iteration'))
    original = trainer.updater.update

    def slow_update():
        time.sleep(0.05)
        original()

    trainer.updater.update = slow_update
    start = time.time()
    trainer.run()
    wall = time.time() - start
    assert trainer.elapsed_time <= wall + 1e-3
    saved = float(npz.read_npz(tmp_path / 'snapshot_iter_6')['elapsed_time'])
    assert saved == pytest.approx(trainer.elapsed_time, abs=0.05)


def test_loading_restores_elapsed_time(make_trainer, tmp_path):
    trainer = make_trainer(stop=(2, 'iteration'))
    trainer.run()
    npz.save_npz(tmp_path / 'snap', trainer)
    fresh = make_trainer(stop=(2, 'iteration'))
    npz.load_npz(tmp_path / 'snap', fresh)
    assert fresh.elapsed_time == pytest.approx(trainer.elapsed_time)
