"""Bad weight files loaded into a model: each is refused with the right class, naming the
file (and every key that does not fit); no payload runs, and no converted cache is
written (the fixture checks $CVZOO_HOME)."""

import io
import os

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import links
from cvzoo.models import zoo
from cvzoo.models.converters import darknet, torch_pth
from tests.helpers import malicious_pickles, pth_writer


class _Payload:
    """Touches ``canary`` when unpickled with plain pickle."""

    def __init__(self, canary):
        self.canary = canary

    def __reduce__(self):
        return os.system, (f'touch {self.canary}',)


def _npz_bytes(**arrays):
    buffer = io.BytesIO()
    numpy.savez(buffer, **arrays)
    return buffer.getvalue()


def _good_npz():
    return _npz_bytes(W=numpy.zeros((2, 3), numpy.float32), b=numpy.zeros(2, numpy.float32))


def _pth_zip(path):
    tensor = pth_writer.tensor('0', numpy.zeros((2, 3), numpy.float32))
    pth_writer.write_zip(path, {'W': tensor}, [tensor])
    return path.read_bytes()


def _bytes(content):
    def write(path, canary):
        path.write_bytes(content() if callable(content) else content)
    return write


def _truncated_pth(path, canary):
    path.write_bytes(_pth_zip(path)[:200])


def _npz_with_pickle(path, canary):
    path.write_bytes(_npz_bytes(W=numpy.array([_Payload(canary)], dtype=object)))


def _raw_pickle(payload, layout):
    def write(path, canary):
        data = (malicious_pickles.code_payloads(canary)[payload]
                if payload in ('os_system', 'builtins_exec')
                else malicious_pickles.BUILD_PAYLOADS[payload])
        malicious_pickles.write_raw_pickle(path, data, layout)
    return write


# case: (writer(path, canary), error, extra text the message holds)
BAD_FILES = {
    'empty': (_bytes(b''), errors.CorruptFileError, ''),
    'wrong_magic': (_bytes(b'\x7fELF' + b'\0' * 60), errors.CorruptFileError, ''),
    'text': (_bytes(b'<html>403 Forbidden</html>\n' * 4), errors.CorruptFileError, ''),
    'truncated_npz': (_bytes(lambda: _good_npz()[:150]), errors.CorruptFileError, ''),
    'npz_cut_before_directory': (_bytes(lambda: _good_npz()[:-30]), errors.CorruptFileError,
                                 ''),
    'truncated_pth_zip': (_truncated_pth, errors.CorruptFileError, ''),
    'npz_with_pickled_object': (_npz_with_pickle, errors.CorruptFileError, 'allow_pickle'),
    'pth_os_system_zip': (_raw_pickle('os_system', 'zip'), torch_pth.UnsafePickleError,
                          'refused'),
    'pth_exec_legacy': (_raw_pickle('builtins_exec', 'legacy'), torch_pth.UnsafePickleError,
                        'refused'),
    'pth_build_onto_storage': (_raw_pickle('storage_dict', 'zip'), torch_pth.UnsafePickleError,
                               'BUILD'),
    'pth_build_onto_dtype': (_raw_pickle('dtype', 'legacy'), torch_pth.UnsafePickleError,
                             'BUILD'),
}


@pytest.mark.parametrize('case', list(BAD_FILES), ids=list(BAD_FILES))
def test_bad_weight_file_is_named_and_runs_nothing(tmp_path, case):
    write, error, extra = BAD_FILES[case]
    path, canary = tmp_path / 'weights.pth', tmp_path / 'canary'
    write(path, canary)
    model = links.Linear(3, 2)
    before = {name: param.array.copy() for name, param in model.namedparams()}
    with pytest.raises(error) as info:
        zoo.load_weights(model, path)
    assert type(info.value) is error
    assert str(path) in str(info.value) and extra in str(info.value)
    assert not canary.exists()
    for name, param in model.namedparams():
        numpy.testing.assert_array_equal(param.array, before[name])


# case: (arrays in the file, names the message must hold)
MISFITS = {
    'missing_key': ({'W': numpy.zeros((2, 3), numpy.float32)}, ['b']),
    'unexpected_key': ({'W': numpy.zeros((2, 3), numpy.float32),
                        'b': numpy.zeros(2, numpy.float32),
                        'extra': numpy.zeros(1, numpy.float32)}, ['extra']),
    'wrong_shape': ({'W': numpy.zeros((3, 2), numpy.float32),
                     'b': numpy.zeros(2, numpy.float32)}, ['W', '(3, 2)', '(2, 3)']),
    'all_three_at_once': ({'W': numpy.zeros((4,), numpy.float32),
                           'c': numpy.zeros(1, numpy.float32)}, ['W', 'b', 'c']),
    'empty_npz': ({'_': numpy.zeros(0)}, ['W', 'b', '_']),
}


@pytest.mark.parametrize('case', list(MISFITS), ids=list(MISFITS))
def test_weights_that_do_not_fit_name_every_key(tmp_path, case):
    arrays, names = MISFITS[case]
    path = tmp_path / 'weights.npz'
    path.write_bytes(_npz_bytes(**arrays))
    with pytest.raises(errors.WeightLoadError) as info:
        zoo.load_weights(links.Linear(3, 2), path)
    message = str(info.value)
    assert 'weights.npz' in message
    for name in names:
        assert name in message


def _darknet_file(path, n_value):
    header = numpy.array([0, 2, 5], '<i4').tobytes() + numpy.array([0], '<i8').tobytes()
    path.write_bytes(header + numpy.zeros(n_value, '<f4').tobytes())


# case: (values in the file, the shapes the model reads)
DARKNET = {
    'too_short': (5, [(2,), (2, 3)]),
    'too_long': (12, [(2,), (2, 3)]),
    'header_only': (0, [(2,)]),
}


@pytest.mark.parametrize('case', list(DARKNET), ids=list(DARKNET))
def test_darknet_weights_of_the_wrong_length_are_named(tmp_path, case):
    n_value, shapes = DARKNET[case]
    path = tmp_path / 'yolo.weights'
    _darknet_file(path, n_value)
    with pytest.raises(errors.CorruptFileError) as info:
        darknet.read_darknet_weights(path, shapes)
    assert type(info.value) is errors.CorruptFileError and 'yolo.weights' in str(info.value)


def test_load_weights_argument_errors(tmp_path):
    with pytest.raises(TypeError, match='path_or_key'):
        zoo.load_weights(links.Linear(3, 2), 42)
