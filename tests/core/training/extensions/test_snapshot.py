import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import npz
from cvzoo.core.training.finite_state import NonFiniteError
from cvzoo.core.training.extensions.log_report import LogReport
from cvzoo.core.training.extensions.snapshots import snapshot


def _params(trainer):
    model = trainer.updater.get_optimizer('main').target
    return {path: backend.to_numpy(param.array).copy() for path, param in model.namedparams()}


def _losses(trainer):
    return [(e['iteration'], e['main/loss']) for e in trainer.get_extension('LogReport').log]


@pytest.mark.parametrize('dropout', [0.0, 0.3], ids=['no_dropout', 'dropout'])
def test_resume_continues_bit_for_bit(make_trainer, tmp_path, dropout):
    """Shuffled SerialIterator, MomentumSGD, dropout (global RNG): stop at 9, go on to 20."""
    numpy.random.seed(0)
    whole = make_trainer(stop=(20, 'iteration'), dropout=dropout, out=tmp_path / 'whole')
    whole.extend(LogReport(trigger=(1, 'iteration')))
    whole.extend(snapshot(), trigger=(9, 'iteration'))
    whole.run()

    numpy.random.seed(123)  # a different global state: the snapshot must restore it
    resumed = make_trainer(stop=(20, 'iteration'), dropout=dropout, out=tmp_path / 'resumed')
    resumed.extend(LogReport(trigger=(1, 'iteration')))
    npz.load_npz(tmp_path / 'whole' / 'snapshot_iter_9', resumed)
    assert resumed.updater.iteration == 9
    resumed.run()

    assert _losses(resumed) == _losses(whole)  # exact equality: bit-for-bit
    expected = _params(whole)
    for path, array in _params(resumed).items():
        numpy.testing.assert_array_equal(array, expected[path], err_msg=path)


def test_resume_on_a_gpu_continues_bit_for_bit(make_trainer, tmp_path, two_gpus):
    """The same on cuda:1 with cuda:0 current: snapshot, load into a fresh trainer, go on."""
    two_gpus[0].use()
    whole = make_trainer(stop=(12, 'iteration'), out=tmp_path / 'whole', device='cuda:1')
    whole.extend(LogReport(trigger=(1, 'iteration')))
    whole.extend(snapshot(), trigger=(5, 'iteration'))
    whole.run()

    resumed = make_trainer(stop=(12, 'iteration'), out=tmp_path / 'resumed', device='cuda:1')
    resumed.extend(LogReport(trigger=(1, 'iteration')))
    npz.load_npz(tmp_path / 'whole' / 'snapshot_iter_10', resumed)
    model = resumed.updater.get_optimizer('main').target
    assert backend.get_device_from_array(model.l1.W.array) == two_gpus[1]
    momentum = model.l1.W.update_rule.state['v']
    assert backend.get_device_from_array(momentum) == two_gpus[1]
    resumed.run()
    assert _losses(resumed) == _losses(whole)  # the log resumes too
    expected = _params(whole)
    for path, array in _params(resumed).items():
        numpy.testing.assert_array_equal(array, expected[path], err_msg=path)


def test_snapshot_file_holds_trainer_state(make_trainer, tmp_path):
    trainer = make_trainer(stop=(4, 'iteration'))
    trainer.extend(snapshot('snap_{.updater.iteration}.npz'), trigger=(2, 'iteration'))
    trainer.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['snap_2.npz', 'snap_4.npz']
    keys = set(npz.read_npz(tmp_path / 'snap_4.npz'))
    for key in ('updater/iteration', 'updater/iterator:main/order', 'updater/model:main/l1/W',
                'updater/optimizer:main/t', 'updater/optimizer:main/l1/W/v', 'elapsed_time',
                'numpy_random/keys'):
        assert key in keys


def test_n_retains_keeps_the_newest(make_trainer, tmp_path):
    trainer = make_trainer(stop=(5, 'iteration'))
    trainer.extend(snapshot(n_retains=2), trigger=(1, 'iteration'))
    trainer.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['snapshot_iter_4', 'snapshot_iter_5']


def test_condition_and_target(make_trainer, tmp_path):
    trainer = make_trainer(stop=(3, 'iteration'))
    model = trainer.updater.get_optimizer('main').target
    calls = []
    trainer.extend(snapshot('model_{.updater.iteration}', target=model,
                            condition=lambda: calls.append(1) or len(calls) == 2),
                   trigger=(1, 'iteration'))
    trainer.run()
    assert [p.name for p in tmp_path.iterdir()] == ['model_2']
    assert set(npz.read_npz(tmp_path / 'model_2')) == {'l1/W', 'l1/b', 'l2/W', 'l2/b'}


def test_autoload_resumes_from_the_newest_snapshot(make_trainer, tmp_path):
    first = make_trainer(stop=(6, 'iteration'))
    first.extend(snapshot(autoload=True), trigger=(3, 'iteration'))
    first.run()
    second = make_trainer(stop=(8, 'iteration'))
    ext = snapshot(autoload=True)
    second.extend(ext, trigger=(3, 'iteration'))
    second.run()
    assert ext.loaded_from.endswith('snapshot_iter_6')
    assert second.updater.iteration == 8


def test_a_failing_save_leaves_no_file(make_trainer, tmp_path):
    def broken_save(path, target):
        with open(path, 'w') as handle:
            handle.write('half')
        raise OSError('disk full')

    trainer = make_trainer(stop=(2, 'iteration'))
    trainer.extend(snapshot(savefun=broken_save), trigger=(1, 'iteration'))
    with pytest.raises(OSError, match='disk full'):
        trainer.run()
    assert list(tmp_path.iterdir()) == []


def test_n_retains_is_checked():
    with pytest.raises(ValueError, match='n_retains'):
        snapshot(n_retains=0)


@pytest.mark.parametrize('autoload', [False, True])
def test_orphan_tmp_files_of_killed_snapshots_are_removed(make_trainer, tmp_path, autoload):
    """A run killed inside the atomic write leaves '.<name>.<random>.tmp'; the next run
    removes them, and leaves every other file alone."""
    first = make_trainer(stop=(2, 'iteration'))
    first.extend(snapshot(), trigger=(2, 'iteration'))
    first.run()
    orphans = [tmp_path / '.snapshot_iter_4.abc123.tmp', tmp_path / '.snapshot_iter_6.x_y.tmp']
    for orphan in orphans:
        orphan.write_bytes(b'half a snapshot')
    others = [tmp_path / '.model.npz.abc.tmp', tmp_path / 'notes.tmp']
    for other in others:
        other.write_bytes(b'not ours')
    second = make_trainer(stop=(3, 'iteration'))
    ext = snapshot(autoload=autoload)
    second.extend(ext, trigger=(10, 'iteration'))
    second.run()
    assert not any(orphan.exists() for orphan in orphans)
    assert all(other.exists() for other in others)
    assert (tmp_path / 'snapshot_iter_2').exists()
    assert (ext.loaded_from is not None) == autoload


def _poison_after_update(trainer, iteration, where):
    """After update ``iteration``, a NaN in ``where``: 'param' (l2/b) or 'state' (l2/b's
    momentum); the loss of that iteration is still finite."""
    model = trainer.updater.get_optimizer('main').target
    original = trainer.updater.update_core

    def update_core():
        original()
        if trainer.updater.iteration + 1 == iteration:  # counted up after update_core
            array = model.l2.b.array if where == 'param' else model.l2.b.update_rule.state['v']
            with backend.using_device_of(array):
                array[1] = numpy.nan

    trainer.updater.update_core = update_core


@pytest.mark.parametrize('where, text', [('param', 'parameter /l2/b'),
                                         ('state', "state 'v' of parameter /l2/b")])
def test_a_non_finite_state_is_not_written(make_trainer, tmp_path, where, text):
    trainer = make_trainer(stop=(5, 'iteration'))
    trainer.extend(snapshot(), trigger=(1, 'iteration'))
    _poison_after_update(trainer, 3, where)
    with pytest.raises(NonFiniteError, match=text) as info:
        trainer.run()
    assert 'iteration 3' in str(info.value)
    assert f"the last finite state is in {tmp_path / 'snapshot_iter_2'}" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['snapshot_iter_1', 'snapshot_iter_2']
    for path in tmp_path.iterdir():
        assert all(numpy.isfinite(a).all() for a in npz.read_npz(path).values()
                   if a.dtype.kind == 'f'), path


def test_a_non_finite_first_state_says_no_snapshot_holds_a_finite_state(make_trainer, tmp_path):
    trainer = make_trainer(stop=(5, 'iteration'))
    trainer.extend(snapshot(), trigger=(1, 'iteration'))
    _poison_after_update(trainer, 1, 'param')
    with pytest.raises(NonFiniteError, match='wrote no snapshot') as info:
        trainer.run()
    assert str(tmp_path) in str(info.value)
    assert not list(tmp_path.iterdir())


def test_a_non_finite_state_on_a_gpu_is_not_written(make_trainer, tmp_path, two_gpus):
    trainer = make_trainer(stop=(3, 'iteration'), device='cuda:1')
    trainer.extend(snapshot(), trigger=(1, 'iteration'))
    _poison_after_update(trainer, 2, 'state')
    with pytest.raises(NonFiniteError, match="state 'v' of parameter /l2/b"):
        trainer.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['snapshot_iter_1']


def test_autoload_of_an_unreadable_newest_snapshot_names_it_and_the_older_one(make_trainer,
                                                                              tmp_path):
    first = make_trainer(stop=(2, 'iteration'))
    first.extend(snapshot(), trigger=(1, 'iteration'))
    first.run()
    newest = tmp_path / 'snapshot_iter_2'
    newest.write_bytes(newest.read_bytes()[:100])  # truncated
    resumed = make_trainer(stop=(4, 'iteration'))
    resumed.extend(snapshot(autoload=True), trigger=(1, 'iteration'))
    with pytest.raises(errors.CorruptFileError) as info:
        resumed.run()
    message = str(info.value)
    assert message.startswith(str(newest))
    assert f"next older snapshot is {tmp_path / 'snapshot_iter_1'}" in message
    assert resumed.updater.iteration == 0  # nothing was loaded or trained
