import json

import pytest

from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.log_report import LogReport, read_log


def test_log_is_json_lines_with_means(make_trainer, tmp_path):
    trainer = make_trainer(stop=(3, 'epoch'))
    every_iteration = LogReport(trigger=(1, 'iteration'), filename='log_iter')
    trainer.extend(every_iteration, name='every_iteration')
    trainer.extend(LogReport(keys=['main/loss']))
    trainer.run()
    lines = (tmp_path / 'log').read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e['epoch'] for e in entries] == [1, 2, 3]
    assert set(entries[0]) == {'epoch', 'iteration', 'elapsed_time', 'main/loss'}
    # The epoch mean is the mean of the per-iteration values of that epoch (batches of
    # 4 over 30 examples: the first epoch ends within iteration 8).
    per_iteration = read_log(tmp_path / 'log_iter')
    assert len(per_iteration) == trainer.updater.iteration
    first_epoch = [e['main/loss'] for e in per_iteration if e['iteration'] <= 8]
    assert entries[0]['iteration'] == 8
    assert entries[0]['main/loss'] == pytest.approx(sum(first_epoch) / 8, rel=1e-6)


def test_no_temporary_file_is_left(make_trainer, tmp_path):
    trainer = make_trainer(stop=(5, 'iteration'))
    trainer.extend(LogReport(trigger=(1, 'iteration')))
    trainer.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['log']


def test_log_survives_a_snapshot(make_trainer, tmp_path):
    trainer = make_trainer(stop=(5, 'iteration'))
    trainer.extend(LogReport(trigger=(2, 'iteration'), filename=None))
    trainer.run()
    npz.save_npz(tmp_path / 'snap.npz', trainer)
    fresh = make_trainer(stop=(5, 'iteration'))
    fresh.extend(LogReport(trigger=(2, 'iteration'), filename=None))
    npz.load_npz(tmp_path / 'snap.npz', fresh)
    log = fresh.get_extension('LogReport').log
    assert log == trainer.get_extension('LogReport').log
    assert len(log) == 2
    # the fifth iteration is summarised but not yet logged; it is kept too
    summary = fresh.get_extension('LogReport')._summary.compute_mean()
    assert set(summary) == {'main/loss', 'main/accuracy'}
