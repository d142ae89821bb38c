import numpy
import pytest

import cvzoo.core as C
from cvzoo import errors
from cvzoo.core import backend


@pytest.mark.parametrize('spec, name', [
    ('cpu', 'cpu'), (-1, 'cpu'), (None, 'cpu'), (0, 'cuda:0'), ('cuda:3', 'cuda:3'),
    (backend.Device('cuda:1'), 'cuda:1'),
], ids=['cpu', 'minus1', 'none', 'int0', 'cuda3', 'device'])
def test_get_device_accepts_every_spec(spec, name):
    assert backend.get_device(spec).name == name


@pytest.mark.parametrize('spec', ['gpu', 'cuda:', 'cuda:x', 'CPU'])
def test_get_device_rejects_bad_names(spec):
    with pytest.raises(ValueError, match='device'):
        backend.get_device(spec)


def test_get_device_rejects_bad_types():
    with pytest.raises(TypeError, match='device'):
        backend.get_device(1.5)


def test_to_device_cpu_returns_same_array():
    x = numpy.zeros(3)
    assert backend.to_device(x, 'cpu') is x


def test_get_array_module_numpy_for_variables_and_arrays():
    assert backend.get_array_module(numpy.zeros(2), C.Variable(numpy.zeros(2)), None) is numpy


def test_cupy_not_imported_by_cpu_work():
    import sys

    import cvzoo.core.functions as F

    F.sum(C.Variable(numpy.ones(3, numpy.float32)) * 2)
    assert backend._cupy is None or 'cupy' in sys.modules


def test_check_same_device_names_both(monkeypatch):
    devices = iter([backend.Device('cpu'), backend.Device('cuda:1')])
    monkeypatch.setattr(backend, '_cupy_if_loaded', lambda: object())
    monkeypatch.setattr(backend, 'get_device_from_array', lambda x: next(devices))
    with pytest.raises(errors.DeviceMismatchError, match='cpu and cuda:1') as info:
        backend.check_same_device([numpy.zeros(1), numpy.zeros(1)], 'Add')
    assert isinstance(info.value, ValueError)
    assert 'Add' in str(info.value)


@pytest.fixture
def no_cupy(monkeypatch):
    """A machine without CuPy: ``import cupy`` fails, and cvzoo has none loaded."""
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == 'cupy':
            raise ImportError('no cupy')
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(backend, '_cupy', None)
    monkeypatch.setattr(builtins, '__import__', no_cupy)


def test_gpu_device_without_cupy_gives_install_hint(no_cupy, monkeypatch):
    with pytest.raises(RuntimeError, match=r"cvzoo\[cuda\]"):
        backend.get_device('cuda:0').xp


def test_to_device_copy_on_the_cpu():
    x = numpy.arange(3.0)
    y = backend.to_device(x, 'cpu', copy=True)
    assert y is not x and not numpy.shares_memory(x, y)
    numpy.testing.assert_array_equal(y, x)
    assert backend.to_device(x, 'cpu', copy=False) is x


@pytest.mark.parametrize('make, expected', [
    (lambda: backend.zeros(3), numpy.zeros(3, numpy.float32)),
    (lambda: backend.ones((2, 1), dtype=numpy.int32), numpy.ones((2, 1), numpy.int32)),
    (lambda: backend.full((2,), 7, device='cpu'), numpy.full(2, 7, numpy.float32)),
], ids=['zeros', 'ones', 'full'])
def test_creation_on_the_cpu(make, expected):
    x = make()
    assert isinstance(x, numpy.ndarray) and x.dtype == expected.dtype
    numpy.testing.assert_array_equal(x, expected)
    assert backend.empty((0, 4)).shape == (0, 4)


@pytest.mark.parametrize('shape', [-1, (2, -3), (2.0, 3), 'ab', None, (True, 2)])
def test_creation_refuses_a_bad_shape_naming_it(shape):
    with pytest.raises(errors.UsageError, match=r'shape: expected an int or a tuple of ints'):
        backend.zeros(shape)


def test_cpu_synchronize_and_timer_do_not_import_cupy(monkeypatch):
    monkeypatch.setattr(backend, '_cupy_if_loaded', lambda: None)
    monkeypatch.setattr(backend, '_import_cupy', lambda: pytest.fail('CuPy was imported'))
    backend.synchronize()
    backend.synchronize('cpu')
    with backend.timer() as t:
        pass
    assert t.device == backend.CPU and t.elapsed_ms >= 0


def test_cuda_without_cupy_gives_install_hint(no_cupy):
    with pytest.raises(RuntimeError, match=r"cvzoo\[cuda\]"):
        backend.get_device('cuda')


def test_device_scope_on_the_host_enters_nothing():
    assert backend.device_scope((numpy.zeros(2), None, numpy.ones(1)), 'Add') is None


def test_device_scope_makes_the_first_gpu_current_and_checks_devices(two_gpus):
    from cvzoo.core.variable import Variable

    on_1 = backend.to_device(numpy.zeros(2, numpy.float32), two_gpus[1])
    scope = backend.device_scope((None, Variable(on_1), on_1), 'Add')
    with scope:
        assert backend.get_device('cuda') == two_gpus[1]
    on_0 = backend.to_device(numpy.zeros(2, numpy.float32), two_gpus[0])
    with pytest.raises(errors.DeviceMismatchError, match='Add: .*cuda:1 and cuda:0'):
        backend.device_scope((on_1, on_0), 'Add')
    with pytest.raises(errors.DeviceMismatchError, match='Mul: .*cpu and cuda:1'):
        backend.device_scope((numpy.zeros(2), on_1), 'Mul')
    # without a name nothing is checked; the first GPU array's device is made current
    with backend.device_scope((numpy.zeros(2), on_1, on_0)):
        assert backend.get_device('cuda') == two_gpus[1]


def test_device_scope_and_is_current_enter_nothing_for_the_current_gpu(two_gpus):
    on_1 = backend.to_device(numpy.zeros(2, numpy.float32), two_gpus[1])
    with two_gpus[1]:
        assert backend.device_scope((on_1,), 'Add') is None
        assert backend.is_current(two_gpus[1]) and not backend.is_current(two_gpus[0])
    with two_gpus[0]:
        assert backend.device_scope((on_1,), 'Add') is not None
        assert backend.is_current(two_gpus[0]) and backend.is_current(backend.CPU)


def test_reduction_kernel_on_the_second_gpu_makes_it_current(two_gpus):
    seen = []

    def twin(x, axis, keepdims):
        seen.append(backend.get_device('cuda'))
        return x.sum(axis=axis, keepdims=keepdims)

    kernel = backend.reduction_kernel('T x', 'T s', 'x', 'a + b', 's = a', '0',
                                      'test_sum_on_second', twin)
    on_1 = backend.to_device(numpy.arange(4.0), two_gpus[1])
    with two_gpus[0]:
        total = kernel(on_1)
        assert backend.get_device('cuda') == two_gpus[0]
    assert seen == [two_gpus[1]]  # the twin ran with the arrays' GPU current
    assert backend.get_device_from_array(total) == two_gpus[1]
    assert float(backend.to_numpy(total)) == 6.0
