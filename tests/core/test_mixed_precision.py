"""cvzoo.core.autocast: which dtypes it takes, scoping, and the rules around the casts."""

import sys
import threading

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import FunctionNode, Parameter, Variable, autocast
from cvzoo.core.config import config
from cvzoo.errors import UsageError


def _linear_output_dtype():
    x = numpy.ones((2, 3), numpy.float32)
    return F.linear(x, numpy.ones((4, 3), numpy.float32)).dtype


@pytest.mark.parametrize('dtype', ['float16', numpy.float16, numpy.dtype(numpy.float16)],
                         ids=['name', 'type', 'dtype'])
def test_float16_spellings(dtype):
    with autocast(dtype):
        assert _linear_output_dtype() == numpy.float16


@pytest.mark.parametrize('spelling', ['name', 'type', 'dtype'])
def test_bfloat16_spellings(spelling):
    ml_dtypes = pytest.importorskip('ml_dtypes')
    dtype = {'name': 'bfloat16', 'type': ml_dtypes.bfloat16,
             'dtype': numpy.dtype(ml_dtypes.bfloat16)}[spelling]
    with autocast(dtype):
        assert _linear_output_dtype() == numpy.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize('dtype', ['float32', numpy.float32, numpy.float64, 'int8', 'half',
                                   None, 16])
def test_other_dtypes_are_refused_naming_dtype(dtype):
    with pytest.raises(UsageError, match=r"autocast: dtype must be 'bfloat16' or 'float16'"):
        autocast(dtype)


def test_bfloat16_without_ml_dtypes_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, 'ml_dtypes', None)
    with pytest.raises(UsageError, match='ml_dtypes'):
        autocast('bfloat16')


def test_nesting_and_switching_off():
    with autocast('float16'):
        with autocast('float16', enabled=False):
            assert _linear_output_dtype() == numpy.float32
        assert _linear_output_dtype() == numpy.float16
    assert config.autocast is None
    assert _linear_output_dtype() == numpy.float32


def test_the_setting_is_restored_after_an_error():
    with pytest.raises(RuntimeError):
        with autocast('float16'):
            raise RuntimeError
    assert config.autocast is None


def test_the_setting_is_per_thread():
    seen = []
    with autocast('float16'):
        thread = threading.Thread(target=lambda: seen.append(_linear_output_dtype()))
        thread.start()
        thread.join()
    assert seen == [numpy.float32]


class _RecordAutocast(FunctionNode):
    """Identity whose backward records the autocast setting it runs under."""

    seen = []

    def forward(self, inputs):
        return inputs[0].copy(),

    def backward(self, indexes, grad_outputs):
        _RecordAutocast.seen.append(config.autocast)
        return grad_outputs[0],


def test_backward_runs_with_autocast_off():
    x = Variable(numpy.ones(3, numpy.float32))
    with autocast('float16'):
        y, = _RecordAutocast().apply((x,))
        F.sum(y).backward()
    assert _RecordAutocast.seen == [None]


def test_master_weights_stay_float32():
    W = Parameter(numpy.ones((4, 3), numpy.float32))
    with autocast('float16'):
        F.sum(F.linear(numpy.ones((2, 3), numpy.float32), W)).backward()
    assert W.dtype == numpy.float32 and W.grad.dtype == numpy.float32
    numpy.testing.assert_array_equal(W.grad, numpy.full((4, 3), 2, numpy.float32))


def test_float64_is_left_alone():
    x = numpy.ones((2, 3))
    with autocast('float16'):
        assert F.linear(x, numpy.ones((4, 3))).dtype == numpy.float64


def test_mixed_operands_promote_only_under_autocast():
    a = Variable(numpy.ones(3, numpy.float16))
    b = Variable(numpy.ones(3, numpy.float32))
    with pytest.raises(TypeError, match='different dtypes'):
        a + b
    with autocast('float16'):
        y = a * b
    assert y.dtype == numpy.float32
    F.sum(y).backward()
    assert a.grad.dtype == numpy.float16 and b.grad.dtype == numpy.float32


def test_products_are_emulated_in_float32_on_the_cpu(rng):
    """The documented emulation: inputs rounded to bfloat16, the product in float32, the
    result rounded to bfloat16 (bit for bit)."""
    ml_dtypes = pytest.importorskip('ml_dtypes')
    bfloat16 = ml_dtypes.bfloat16
    x = rng.normal(size=(5, 64)).astype(numpy.float32)
    W = rng.normal(size=(3, 64)).astype(numpy.float32)
    with autocast('bfloat16'):
        y = F.linear(x, W)
    rounded = x.astype(bfloat16).astype(numpy.float32), W.astype(bfloat16).astype(numpy.float32)
    want = (rounded[0] @ rounded[1].T).astype(bfloat16)
    assert y.dtype == numpy.dtype(bfloat16)
    numpy.testing.assert_array_equal(y.array.view(numpy.uint16), want.view(numpy.uint16))
