import numpy
import pytest

from cvzoo import errors
from cvzoo.models import get_model
from cvzoo.models.trained_model import read_model_config, save_trained_model


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
