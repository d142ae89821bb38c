"""BatchNormalization: train vs test mode, running averages, lazy size, gradients."""

import numpy
import pytest

from cvzoo.core import gradient_check
from cvzoo.core.config import using_config
from cvzoo.core.links.normalization.batch_normalization import BatchNormalization
from cvzoo.core.serializers import npz


def _batch_stats(x, axes):
    return x.mean(axis=axes), x.var(axis=axes)


@pytest.mark.parametrize('x_shape, size, axis, axes', [
    ((4, 3, 2, 2), 3, None, (0, 2, 3)),
    ((4, 3, 2, 2), None, None, (0, 2, 3)),
    ((5, 3), None, None, (0,)),
    ((4, 3, 2), None, (0, 1), (0, 1)),
], ids=['nchw', 'nchw-lazy', 'nc', 'axis-tuple'])
def test_train_mode_normalises_and_updates_averages(x_shape, size, axis, axes):
    link = BatchNormalization(size, decay=0.8, axis=axis)
    x = numpy.random.RandomState(0).uniform(-1, 3, x_shape).astype(numpy.float32)
    y = link(x)
    mean, var = _batch_stats(x.astype(numpy.float64), axes)
    shape = [1 if i in axes else n for i, n in enumerate(x_shape)]
    expected = (x - mean.reshape(shape)) / numpy.sqrt(var.reshape(shape) + 2e-5)
    numpy.testing.assert_allclose(y.array, expected, rtol=1e-4, atol=1e-4)
    m = x.size // mean.size
    numpy.testing.assert_allclose(link.avg_mean, 0.2 * mean, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(link.avg_var, 0.8 + 0.2 * var * m / (m - 1), rtol=1e-5)
    assert link.avg_mean.dtype == numpy.float32 and link.gamma.shape == mean.shape


def test_test_mode_uses_averages_and_keeps_them():
    link = BatchNormalization(3)
    link.avg_mean[...] = [1, 2, 3]
    link.avg_var[...] = [4, 1, 0.25]
    link.gamma.array[...] = 2
    link.beta.array[...] = 0.5
    x = numpy.random.rand(2, 3, 2).astype(numpy.float32)
    with using_config('train', False):
        y = link(x)
    mean = numpy.array([1, 2, 3], 'f')[:, None]
    var = numpy.array([4, 1, 0.25], 'f')[:, None]
    numpy.testing.assert_allclose(y.array, 2 * (x - mean) / numpy.sqrt(var + 2e-5) + 0.5,
                                  rtol=1e-5, atol=1e-6)
    numpy.testing.assert_array_equal(link.avg_mean, [1, 2, 3])


def test_finetune_averages_exactly():
    link = BatchNormalization(2)
    batches = [numpy.random.rand(4, 2).astype(numpy.float32) + i for i in range(3)]
    for x in batches:
        link(x, finetune=True)
    assert link.N == 3
    expected = numpy.mean([x.mean(axis=0) for x in batches], axis=0)
    numpy.testing.assert_allclose(link.avg_mean, expected, rtol=1e-5)
    link.start_finetuning()
    assert link.N == 0


def test_without_gamma_and_beta():
    link = BatchNormalization(3, use_gamma=False, use_beta=False)
    assert list(link.params()) == []
    y = link(numpy.random.rand(4, 3).astype(numpy.float32))
    numpy.testing.assert_allclose(y.array.mean(axis=0), 0, atol=1e-5)


def test_initial_values_and_decay_check():
    link = BatchNormalization(2, initial_gamma=3.0, initial_avg_mean=numpy.array([1.0, 2.0]))
    numpy.testing.assert_array_equal(link.gamma.array, 3)
    numpy.testing.assert_array_equal(link.avg_mean, [1, 2])
    numpy.testing.assert_array_equal(link.avg_var, 1)
    with pytest.raises(ValueError, match='decay'):
        BatchNormalization(2, decay=1.5)


def test_gradient_check_train_mode():
    link = BatchNormalization(2)
    link.gamma.array[...] = [0.5, 1.5]
    link.beta.array[...] = [0.1, -0.2]
    x = numpy.random.RandomState(1).randn(3, 2, 2)
    gradient_check.check_backward(link, x, numpy.random.randn(3, 2, 2),
                                  params=(link.gamma, link.beta), atol=1e-4, rtol=1e-3)


def test_running_averages_are_saved_and_lazily_loaded(tmp_path):
    link = BatchNormalization()
    link(numpy.random.rand(4, 3, 2, 2).astype(numpy.float32))
    link.N = 5
    npz.save_npz(tmp_path / 'bn.npz', link)
    fresh = BatchNormalization()
    npz.load_npz(tmp_path / 'bn.npz', fresh)
    numpy.testing.assert_array_equal(fresh.avg_var, link.avg_var)
    numpy.testing.assert_array_equal(fresh.gamma.array, link.gamma.array)
    assert fresh.N == 5
