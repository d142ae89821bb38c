"""Training under faults, on the train scripts with the tiny data of tests.helpers.train_runs:
a non-finite loss stops without a final model, a killed snapshot's .tmp is removed by
the next run, and a corrupt snapshot to resume from is named. A recipe hyper-parameter
of a wrong value is named."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.training.extensions.fail_on_non_number import NonFiniteError
from tests.helpers import train_runs
from tests.helpers.darknet_cfgs import TINY_YOLO_CFG


def _truncated(path):
    path.write_bytes(b'PK\x03\x04' + b'\0' * 40)


def _text(path):
    path.write_text('not a snapshot')


def _empty_npz(path):
    with open(path, 'wb') as file:
        numpy.savez(file, nothing=numpy.zeros(1))


# case: (how the snapshot is broken, error, text besides the file's name)
CORRUPT_SNAPSHOTS = {
    'truncated_zip': (_truncated, errors.CorruptFileError, ''),
    'text_file': (_text, errors.CorruptFileError, ''),
    'npz_of_other_keys': (_empty_npz, errors.WeightLoadError, 'nothing'),
}  # a missing one is refused by --resume's argument type (tests/faults/test_scripts.py)


@pytest.mark.parametrize('case', list(CORRUPT_SNAPSHOTS), ids=list(CORRUPT_SNAPSHOTS))
def test_resume_from_a_corrupt_snapshot_names_it(tmp_path, case):
    breaks, error, text = CORRUPT_SNAPSHOTS[case]
    out = tmp_path / 'out'
    out.mkdir()
    breaks(out / 'snapshot_iter_7')  # the newest snapshot, which --resume loads
    args = train_runs.train_args('classifier', tmp_path, out, 2)
    with pytest.raises(error) as info:
        train_runs.load_train_script('classifier').main(args + ['--resume'])
    assert type(info.value) is error
    assert 'snapshot_iter_7' in str(info.value) and text in str(info.value)
    assert not (out / 'model_final.npz').exists()


# case: (script, iteration whose loss is NaN)
NON_FINITE = {
    'classifier_first_iteration': ('classifier', 1),
    'classifier_later_iteration': ('classifier', 2),
    'yolo_first_iteration': ('yolo', 1),
}


@pytest.mark.parametrize('case', list(NON_FINITE), ids=list(NON_FINITE))
def test_non_finite_loss_stops_without_a_final_model(tmp_path, monkeypatch, case):
    name, iteration = NON_FINITE[case]
    out = tmp_path / 'out'
    train_runs.poison_at(monkeypatch, iteration)
    with pytest.raises(NonFiniteError, match='main/loss') as info:
        train_runs.load_train_script(name).main(train_runs.train_args(name, tmp_path, out, 3))
    assert str(out) in str(info.value)
    assert not (out / train_runs.FINAL[name]).exists()
    assert not list(out.glob('.*.tmp'))


def test_killed_snapshot_leaves_tmp_that_the_next_run_removes(tmp_path):
    out = tmp_path / 'out'
    out.mkdir()
    orphan = out / '.snapshot_iter_1.k2j4x.tmp'
    orphan.write_bytes(b'half a snapshot')
    other = out / 'notes.tmp'  # not a snapshot's: stays
    other.write_text('mine')
    train_runs.load_train_script('classifier').main(
        train_runs.train_args('classifier', tmp_path, out, 1))
    assert not orphan.exists() and other.read_text() == 'mine'
    assert (out / train_runs.FINAL['classifier']).exists()


@pytest.mark.parametrize('value', [0, -2, 2.5, True, '90', None])
def test_yolo_max_boxes_not_a_positive_int_is_named(tmp_path, value):
    from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector

    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_YOLO_CFG)
    model = DarknetDetector(cfg)
    with pytest.raises(errors.UsageError,
                       match=rf'max_boxes: expected an int >= 1, got {value!r}$'):
        model.training_recipe(max_boxes=value)


@pytest.mark.parametrize('bad', [3, -2])
def test_yolo_label_that_is_no_class_id_is_named_before_the_device(tmp_path, bad):
    # on a GPU the loss's gathers and scatters would wrap such an id without an error
    from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector

    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_YOLO_CFG)
    model = DarknetDetector(cfg, n_fg_class=3)
    recipe = model.training_recipe()
    img = numpy.zeros((3,) + tuple(model.insize), numpy.float32)
    box = numpy.array([[2, 2, 10, 10], [4, 4, 12, 12]], numpy.float32)
    batch = [(img, box, numpy.array([0, 1], numpy.int32)),
             (img, box, numpy.array([2, bad], numpy.int32))]
    message = (rf'labels: image 1 of the batch has the label {bad}, not a class id of a '
               r'model of 3 classes \(0 to 2\)')
    with pytest.raises(errors.UsageError, match=message):
        recipe.converter(batch)
    with pytest.raises(errors.UsageError, match=message):
        recipe.train_chain(recipe.converter(batch[:1])[0].repeat(2, axis=0),
                           [box, box], [batch[0][2], batch[1][2]])
