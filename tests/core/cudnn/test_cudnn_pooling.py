"""Pooling forward through cvzoo.core.cudnn.pooling on the CuPy stand-in (fake libcudnn)."""

import numpy
import pytest

from cvzoo.core import using_config
from cvzoo.core.functions.math.sum import sum as sum_
from cvzoo.core.functions.pooling.average_pooling_2d import average_pooling_2d
from cvzoo.core.functions.pooling.max_pooling_2d import max_pooling_2d
from cvzoo.core.variable import Variable


def _operations(module):
    return [e['operation'] for e in module.log if e['event'] == 'execute']


def _x(stand_in, shape=(2, 3, 7, 8), dtype=numpy.float32):
    rng = numpy.random.default_rng(2)
    return stand_in.asarray(rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize('kwargs,operation', [
    (dict(pad_value=0), 'pooling_average_include_padding'),
    (dict(pad_value=None), 'pooling_average_exclude_padding'),
])
def test_average_pooling_forward_on_cudnn_backward_on_cupy(fake_cudnn, stand_in, kwargs,
                                                           operation):
    x = _x(stand_in)

    def run():
        xv = Variable(x)
        y = average_pooling_2d(xv, 3, stride=2, pad=1, **kwargs)
        sum_(y * y).backward()
        return y.array, xv.grad

    with using_config('use_cudnn', 'never'):
        expected = run()
    got = run()
    assert _operations(fake_cudnn) == [operation]
    for e, g in zip(expected, got):
        numpy.testing.assert_allclose(g.get(), e.get(), rtol=1e-6, atol=1e-6)


def test_max_pooling_in_inference_runs_cudnn(fake_cudnn, stand_in):
    x = _x(stand_in)
    with using_config('enable_backprop', False):
        with using_config('use_cudnn', 'never'):
            expected = max_pooling_2d(x, 3, stride=2, pad=1, cover_all=False).array
        got = max_pooling_2d(x, 3, stride=2, pad=1, cover_all=False).array
    assert _operations(fake_cudnn) == ['pooling_max']
    numpy.testing.assert_array_equal(got.get(), expected.get())


def test_max_pooling_in_training_keeps_its_winners_on_cupy(fake_cudnn, stand_in):
    xv = Variable(_x(stand_in))
    sum_(max_pooling_2d(xv, 3, stride=2, pad=1)).backward()
    assert fake_cudnn.log == []


def test_a_cover_all_window_over_the_edge_takes_the_cupy_path(fake_cudnn, stand_in):
    x = _x(stand_in)  # 7 x 8: cover_all adds a window on the width
    with using_config('enable_backprop', False):
        max_pooling_2d(x, 2, stride=2, cover_all=True)
        assert fake_cudnn.log == []
        max_pooling_2d(x[:, :, :6], 2, stride=2, cover_all=True)  # same size as floor
    assert _operations(fake_cudnn) == ['pooling_max']


def test_pooling_runs_on_the_current_stream_and_device(fake_cudnn, stand_in):
    import cupy  # the stand-in

    with cupy.cuda.Device(1):
        x = _x(stand_in)
        stream = cupy.cuda.Stream()
        with stream:
            y = average_pooling_2d(x, 2)
    run, = [e for e in fake_cudnn.log if e['event'] == 'execute']
    assert run['device'] == 1 and run['stream'] == stream.ptr
    assert y.array.device.id == 1
