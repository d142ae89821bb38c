"""NaN and inf under faults: weight files and snapshots holding them are refused naming
the file and the first such array; float images holding them are refused naming the
file or the image; training never writes a snapshot holding them and says which
snapshot holds the last finite state; optimizers and thresholds refuse them as
hyperparameters; an unreadable newest snapshot to resume from is named, with the next
older one; a float16 step whose gradients overflow under a LossScaler is skipped, and the
run goes on."""

import io
import json

import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.core import links, optimizers
from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.fail_on_non_number import NonFiniteError
from cvzoo.models import registry, zoo
from cvzoo.utils.image import read_image
from tests.helpers import fake_cli_models, pth_writer, train_runs


def _npz(path, **arrays):
    buffer = io.BytesIO()
    numpy.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def _pth(path, **arrays):
    tensors = [pth_writer.tensor(str(k), array) for k, array in enumerate(arrays.values())]
    pth_writer.write_zip(path, dict(zip(arrays, tensors)), tensors)


_W, _B = numpy.ones((2, 3), numpy.float32), numpy.ones(2, numpy.float32)


def _with(array, value):
    array = array.copy()
    array.flat[1 % array.size] = value
    return array


# case: (file name, writer, arrays, the key named first, a key not named)
NON_FINITE_WEIGHTS = {
    'npz_nan': ('weights.npz', _npz, {'W': _with(_W, numpy.nan), 'b': _B}, 'W', 'b'),
    'npz_inf_in_the_second_array': ('weights.npz', _npz, {'W': _W, 'b': _with(_B, numpy.inf)},
                                    'b', 'W'),
    'npz_two_bad_arrays': ('weights.npz', _npz, {'W': _with(_W, -numpy.inf),
                                                 'b': _with(_B, numpy.nan)}, 'W', 'b'),
    'pth_nan_float16': ('weights.pth', _pth, {'W': _with(_W, numpy.nan).astype(numpy.float16),
                                              'b': _B}, 'W', 'b'),
}


@pytest.mark.parametrize('case', list(NON_FINITE_WEIGHTS), ids=list(NON_FINITE_WEIGHTS))
def test_weights_holding_nan_or_inf_are_refused_naming_the_first_array(tmp_path, case):
    name, write, arrays, first, other = NON_FINITE_WEIGHTS[case]
    path = tmp_path / name
    write(path, **arrays)
    model = links.Linear(3, 2)
    before = {key: param.array.copy() for key, param in model.namedparams()}
    with pytest.raises(errors.WeightLoadError) as info:
        zoo.load_weights(model, path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert f'{first} holds NaN or inf' in message and f'{other} holds' not in message
    for key, param in model.namedparams():
        numpy.testing.assert_array_equal(param.array, before[key])
    # no converted cache of the .pth was written: the fixture checks $CVZOO_HOME


@pytest.mark.parametrize('bad', [numpy.nan, numpy.inf], ids=['nan', 'inf'])
def test_a_float_tiff_holding_nan_or_inf_is_refused_naming_it(tmp_path, bad):
    grey = numpy.full((6, 8), 50.0, numpy.float32)
    grey[3, 4] = bad
    path = tmp_path / 'scan.tif'
    Image.fromarray(grey).save(path)
    with pytest.raises(errors.CorruptFileError) as info:
        read_image(path)
    assert str(path) in str(info.value) and 'NaN or inf' in str(info.value)


def _float_images():
    good = numpy.full((3, 40, 48), 100.0, numpy.float32)
    bad = good.copy()
    bad[1, 20, 20] = numpy.nan
    return [good, good, bad]


# case: the model whose predict() gets a float image holding NaN as imgs[2]
PREDICTORS = {
    'ssd_detector': lambda: registry.get_model('ssd_tiny'),
    'keypoint_detector': fake_cli_models.FakePersonKeypointDetector,
}


@pytest.mark.parametrize('case', list(PREDICTORS), ids=list(PREDICTORS))
def test_predict_refuses_a_float_image_holding_nan_naming_its_index(case):
    model = PREDICTORS[case]()
    with pytest.raises(errors.UsageError, match=r'^imgs\[2\]: the image holds NaN or inf'):
        model.predict(_float_images())


# case: (what is set, the name in the message)
BAD_SETTINGS = {
    'lr_nan': (lambda: optimizers.MomentumSGD(lr=float('nan')), 'lr'),
    'lr_negative': (lambda: optimizers.SGD(lr=-1), 'lr'),
    'eps_inf': (lambda: optimizers.Adam(eps=float('inf')), 'eps'),
    'lr_set_by_a_schedule': (lambda: setattr(optimizers.MomentumSGD(), 'lr', float('nan')),
                             'lr'),
    'score_thresh_nan': (lambda: setattr(fake_cli_models.FakePersonKeypointDetector(),
                                         'score_thresh', float('nan')), 'score_thresh'),
    'nms_thresh_above_1': (lambda: setattr(registry.get_model('ssd_tiny'), 'nms_thresh', 3),
                           'nms_thresh'),
}


@pytest.mark.parametrize('case', list(BAD_SETTINGS), ids=list(BAD_SETTINGS))
def test_non_finite_or_negative_settings_are_refused_naming_them(case):
    make, name = BAD_SETTINGS[case]
    with pytest.raises(errors.UsageError, match=f'^{name}: expected a finite number'):
        make()


def _non_finite_keys(path):
    return [key for key, array in npz.read_npz(path).items()
            if array.dtype.kind == 'f' and not numpy.isfinite(array).all()]


def test_a_diverged_update_writes_no_snapshot_and_the_message_names_the_finite_one(
        tmp_path, monkeypatch):
    out = tmp_path / 'out'
    args = train_runs.train_args('classifier', tmp_path, out, 3)  # a snapshot per iteration
    with monkeypatch.context() as patch:
        train_runs.poison_after(patch, 2)  # iteration 2's loss is finite, its state is not
        with pytest.raises(NonFiniteError) as info:
            train_runs.load_train_script('classifier').main(args)
    message = str(info.value)
    assert 'iteration 2' in message and 'holds NaN or inf' in message
    assert f"the last finite state is in {out / 'snapshot_iter_1'}" in message
    snapshots = sorted(out.glob('snapshot_iter_*'))
    assert [p.name for p in snapshots] == ['snapshot_iter_1']
    assert not _non_finite_keys(snapshots[0])
    assert not (out / 'model_final.npz').exists()
    # the snapshot named resumes
    train_runs.load_train_script('classifier').main(
        args + ['--resume'])
    assert (out / 'model_final.npz').exists()


def test_a_first_update_that_diverges_says_no_snapshot_holds_a_finite_state(
        tmp_path, monkeypatch):
    out = tmp_path / 'out'
    train_runs.poison_after(monkeypatch, 1)
    with pytest.raises(NonFiniteError) as info:
        train_runs.load_train_script('yolo').main(train_runs.train_args('yolo', tmp_path, out, 3))
    assert f'this run wrote no snapshot in {out}, so none holds a finite state' in str(info.value)
    assert not list(out.glob('snapshot_iter_*'))
    assert not (out / train_runs.FINAL['yolo']).exists()


def test_resume_from_a_snapshot_holding_nan_names_it_and_the_array(tmp_path):
    out = tmp_path / 'out'
    args = train_runs.train_args('classifier', tmp_path, out, 1)
    train_runs.load_train_script('classifier').main(args)
    snapshot = out / 'snapshot_iter_1'
    arrays = npz.read_npz(snapshot)
    key = next(k for k in arrays if k.startswith('updater/model:main/') and k.endswith('/W'))
    arrays[key] = numpy.full_like(arrays[key], numpy.nan)
    _npz(snapshot, **arrays)
    (out / 'model_final.npz').unlink()
    with pytest.raises(errors.WeightLoadError) as info:
        train_runs.load_train_script('classifier').main(args + ['--resume'])
    assert str(info.value).startswith(str(snapshot))
    assert f'{key} holds NaN or inf' in str(info.value)
    assert not (out / 'model_final.npz').exists()


def test_resume_from_a_truncated_newest_snapshot_names_it_and_what_is_left(tmp_path):
    out = tmp_path / 'out'
    args = train_runs.train_args('yolo', tmp_path, out, 2)
    train_runs.load_train_script('yolo').main(args)
    (out / train_runs.FINAL['yolo']).unlink()
    newest = out / 'snapshot_iter_2'  # the scripts keep one snapshot
    newest.write_bytes(newest.read_bytes()[:300])
    with pytest.raises(errors.CorruptFileError) as info:
        train_runs.load_train_script('yolo').main(args + ['--resume'])
    message = str(info.value)
    assert message.startswith(str(newest)) and 'there is no older snapshot' in message
    assert not (out / train_runs.FINAL['yolo']).exists()


def test_a_trained_model_holding_nan_is_not_written(tmp_path):
    """model_final.npz is written only from finite arrays (a batch norm's statistics
    count): a model whose running mean went NaN writes nothing."""
    from cvzoo.models import get_model
    from cvzoo.models.weights.trained_model import save_trained_model

    model = get_model('small_cnn', n_class=3)
    model.bn1.avg_mean[...] = numpy.nan
    path = tmp_path / 'model_final.npz'
    with pytest.raises(NonFiniteError, match='bn1/avg_mean'):
        save_trained_model(model, path, 'small_cnn', n_class=3)
    assert list(tmp_path.iterdir()) == []


def test_an_overflowing_float16_step_is_skipped_and_the_run_goes_on(tmp_path, monkeypatch):
    out = tmp_path / 'out'
    args = train_runs.train_args('classifier', tmp_path, out, 4) + ['--autocast', 'float16']
    unscale = optimizers.LossScaler.unscale
    calls = []

    def overflow_at_the_second_step(self, link):
        calls.append(1)
        if len(calls) == 2:  # what a float16 overflow in backward leaves
            param = next(p for p in link.params() if p.grad is not None)
            param.grad[...] = numpy.inf
        return unscale(self, link)

    monkeypatch.setattr(optimizers.LossScaler, 'unscale', overflow_at_the_second_step)
    train_runs.load_train_script('classifier').main(args)
    scales = [json.loads(line)['loss_scale'] for line in (out / 'log').read_text().splitlines()]
    assert scales[1] == scales[0] / 2  # the second step was skipped
    # (real float16 overflows may skip more steps: each one halves the scale)
    n_skipped = int(numpy.log2(2.0 ** 15 / scales[-1]))
    assert npz.read_npz(out / 'snapshot_iter_4')['updater/optimizer:main/t'] == 4 - n_skipped
    snapshots = sorted(out.glob('snapshot_iter_*'))
    assert snapshots and all(not _non_finite_keys(p) for p in snapshots)
    assert (out / 'model_final.npz').exists() and not _non_finite_keys(out / 'model_final.npz')
