"""cuDNN settings and refusals (cvzoo.core.cudnn) on the CuPy stand-in: a wrong
``use_cudnn`` is one UsageError naming it, and a graph cuDNN refuses falls back."""

import sys

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import using_config
from cvzoo.core.functions.connection.convolution_2d import convolution_2d


@pytest.fixture
def frontend(stand_in, monkeypatch):
    """Install a fake ``cudnn`` (or None: not importable); forget plans before and after."""
    from cvzoo.core.cudnn import availability, plans
    from cvzoo.testing import cudnn_stand_in

    def install(importable=True):
        module = cudnn_stand_in.make_module() if importable else None
        monkeypatch.setitem(sys.modules, 'cudnn', module)
        availability.forget_frontend()
        plans.clear()
        return module

    yield install
    availability.forget_frontend()
    plans.clear()


def _conv_inputs(stand_in):
    rng = numpy.random.default_rng(0)
    return (stand_in.asarray(rng.standard_normal((1, 2, 5, 5)).astype(numpy.float32)),
            stand_in.asarray(rng.standard_normal((3, 2, 3, 3)).astype(numpy.float32)))


@pytest.mark.parametrize('value,importable,message', [
    ('always', False, r"config 'use_cudnn' is 'always' but convolution_2d cannot use cuDNN: "
                      r"the 'cudnn' module .* does not import"),
    ('sometimes', True, r"config 'use_cudnn' must be one of 'auto', 'always', 'never', "
                        r"got 'sometimes'"),
])
def test_a_wrong_use_cudnn_is_one_usage_error(frontend, stand_in, value, importable, message):
    frontend(importable)
    x, W = _conv_inputs(stand_in)
    with using_config('use_cudnn', value), pytest.raises(errors.UsageError, match=message):
        convolution_2d(x, W, pad=1)


def test_a_refused_graph_falls_back_and_keeps_the_reason(frontend, stand_in):
    from cvzoo.core.cudnn import plans

    module = frontend()
    module.refuse = lambda name, inputs, outputs: True
    x, W = _conv_inputs(stand_in)
    with using_config('use_cudnn', 'never'):
        expected = convolution_2d(x, W, pad=1).array.get()
    with using_config('use_cudnn', 'always'):  # 'always' asks for cuDNN, not for failure
        got = convolution_2d(x, W, pad=1).array.get()
    numpy.testing.assert_allclose(got, expected, rtol=1e-6)
    (reason,) = plans.refusals.values()
    assert 'no engine for conv_fprop' in reason
