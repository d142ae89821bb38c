import json

import numpy
import pytest

from cvzoo import errors
from cvzoo.models import get_model
from cvzoo.models.weights.trained_model import read_model_config, save_trained_model


def test_trained_model_file_rebuilds_its_model(tmp_path, rng):
    model = get_model('small_cnn', n_class=3)
    model(numpy.zeros((1, 3, 32, 32), numpy.float32))  # fix the lazily sized layers
    model.label_names = ('cat', 'dog', 'bird')
    for param in model.params():
        param.array[...] = rng.standard_normal(param.shape)
    save_trained_model(model, tmp_path / 'mine.npz', 'small_cnn', n_class=3)
    assert read_model_config(tmp_path / 'mine.npz')['kwargs'] == {'n_class': 3}
    loaded = get_model('small_cnn', pretrained_model=str(tmp_path / 'mine.npz'))
    assert loaded.label_names == ('cat', 'dog', 'bird')
    for (name, mine), (_, theirs) in zip(loaded.namedparams(), model.namedparams()):
        numpy.testing.assert_array_equal(mine.array, theirs.array, err_msg=name)


def test_trained_model_of_another_kind_is_refused(tmp_path):
    save_trained_model(get_model('small_cnn', n_class=2), tmp_path / 'a.npz', 'small_cnn',
                       n_class=2)
    with pytest.raises(ValueError, match="holds a trained 'small_cnn'"):
        get_model('squeezenet1_1', pretrained_model=str(tmp_path / 'a.npz'))


def test_plain_files_have_no_config(tmp_path):
    assert read_model_config(tmp_path / 'missing.npz') is None
    numpy.savez(tmp_path / 'plain.npz', x=numpy.zeros(2))
    assert read_model_config(tmp_path / 'plain.npz') is None


def test_fewer_label_names_than_classes_is_refused(tmp_path):
    model = get_model('small_cnn', n_class=3)
    model(numpy.zeros((1, 3, 32, 32), numpy.float32))
    model.label_names = ('cat', 'dog')
    save_trained_model(model, tmp_path / 'short.npz', 'small_cnn', n_class=3)
    with pytest.raises(ValueError, match=r'short\.npz names 2 classes .* of 3'):
        get_model('small_cnn', pretrained_model=str(tmp_path / 'short.npz'))


@pytest.mark.parametrize('cut', [0.2, 0.6, 0.95])
def test_truncated_trained_model_names_the_file(tmp_path, cut):
    model = get_model('small_cnn', n_class=3)
    model(numpy.zeros((1, 3, 32, 32), numpy.float32))
    save_trained_model(model, tmp_path / 'cut.npz', 'small_cnn', n_class=3)
    data = (tmp_path / 'cut.npz').read_bytes()
    (tmp_path / 'cut.npz').write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(errors.CorruptFileError, match=r'cut\.npz'):
        get_model('small_cnn', pretrained_model=str(tmp_path / 'cut.npz'), n_class=3)


def test_unknown_recorded_box_convention_names_the_file(tmp_path):
    model = get_model('ssd_tiny', n_fg_class=2)
    model.box_convention = 'pixel'
    save_trained_model(model, tmp_path / 'odd.npz', 'ssd_tiny', n_fg_class=2)
    with pytest.raises(ValueError, match=r"odd\.npz records 'pixel'"):
        get_model('ssd_tiny', pretrained_model=str(tmp_path / 'odd.npz'))


def test_files_without_a_box_convention_leave_the_models_own(tmp_path):
    """Files written before the convention was recorded, and classifiers' files."""
    model = get_model('ssd_tiny', n_fg_class=2)
    save_trained_model(model, tmp_path / 'old.npz', 'ssd_tiny', n_fg_class=2)
    with numpy.load(tmp_path / 'old.npz') as archive:
        arrays = dict(archive)
    config = read_model_config(tmp_path / 'old.npz')
    del config['box_convention']
    arrays['__cvzoo_model__'] = numpy.frombuffer(json.dumps(config).encode(), numpy.uint8)
    numpy.savez(tmp_path / 'old.npz', **arrays)
    assert get_model('ssd_tiny', pretrained_model=str(tmp_path / 'old.npz')).box_convention \
        == 'continuous'
    classifier = get_model('small_cnn', n_class=2)
    classifier(numpy.zeros((1, 3, 32, 32), numpy.float32))
    save_trained_model(classifier, tmp_path / 'cnn.npz', 'small_cnn', n_class=2)
    assert read_model_config(tmp_path / 'cnn.npz')['box_convention'] is None
    assert not hasattr(get_model('small_cnn', pretrained_model=str(tmp_path / 'cnn.npz')),
                       'box_convention')
