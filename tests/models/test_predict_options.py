"""predict(..., cuda_graph=True) and predict(..., dtype=...) of a classifier, a semantic
segmenter and the one-stage detectors (SSD, YOLO): graphed answers equal eager ones bit for
bit on the CuPy stand-in, one graph per input shape; low-precision answers are float32 and
close to float32 ones (options it cannot take: tests/faults/test_predict_options.py)."""

import warnings

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.common import network_runtime
from cvzoo.testing.small_models import build_small_model

MODELS = ('small_cnn', 'segnet_basic', 'ssd_tiny', 'yolov2_tiny')


def _model(name, device):
    numpy.random.seed(0)
    _, model = build_small_model(name)
    rng = numpy.random.RandomState(0)
    # a zero-initialised head would give the same answer whatever runs the network
    for param in model.params(include_uninit=False):
        param.array += rng.normal(scale=0.05, size=param.shape).astype(param.dtype)
    return model.to_device(device)


def _images(sides, seed=0):
    rng = numpy.random.RandomState(seed)
    return [rng.uniform(0, 255, (3, h, w)).astype(numpy.float32) for h, w in sides]


def _flat(result):
    """The arrays of a predict() result (an array, a list, or a tuple of lists)."""
    if isinstance(result, numpy.ndarray):
        return [result]
    return [array for part in result for array in _flat(part)]


def _assert_same(got, want):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        numpy.testing.assert_array_equal(g, w)


@pytest.mark.parametrize('name', MODELS)
def test_graphed_predict_equals_eager_and_keeps_a_graph_per_shape(name, stand_in):
    model = _model(name, 'cuda:0')
    images = _images([(40, 48)] * 3)  # batches of 2 and 1: two input shapes
    want = model.predict(images, batchsize=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        got = model.predict(images, batchsize=2, cuda_graph=True)
        again = model.predict(images, batchsize=2, cuda_graph=True)
    assert not [w for w in caught if 'runs eagerly' in str(w.message)]
    _assert_same(got, want)
    _assert_same(again, want)
    graphed = network_runtime.graphed_network(model)
    assert graphed.n_graphs == 2 and graphed.fallback_reason is None


def test_new_weights_are_captured_again(stand_in):
    model = _model('small_cnn', 'cuda:0')
    images = _images([(32, 32)])
    model.predict(images, cuda_graph=True)
    model.fc.W.array = model.fc.W.array * 2  # as weights loaded
    _assert_same(model.predict(images, cuda_graph=True), model.predict(images))


def test_a_refused_capture_warns_once_and_predicts_eagerly(stand_in, monkeypatch):
    model = _model('small_cnn', 'cuda:0')
    images = _images([(32, 32)] * 2)
    want = model.predict(images, batchsize=1)
    forward = model.forward

    def forward_with_a_sync(x):
        float(x.sum())  # a host synchronisation: no graph can hold it
        return forward(x)

    monkeypatch.setattr(model, 'forward', forward_with_a_sync)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        got = [model.predict(images, batchsize=1, cuda_graph=True) for _ in range(2)]
    refusals = [str(w.message) for w in caught if 'runs eagerly' in str(w.message)]
    assert len(refusals) == 1, refusals
    assert refusals[0].startswith('the network of SmallCNN cannot be captured')
    assert 'float (a host synchron' in refusals[0]
    for result in got:
        _assert_same(result, want)


# largest difference allowed from the float32 answer: of probabilities, and of raw network
# outputs relative to their norm (measured: 1e-3 in float16, 7e-3 in bfloat16)
TOLERANCE = {'float16': 5e-3, 'bfloat16': 3e-2}


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_classifier_predicts_in_low_precision(dtype, device):
    if dtype == 'bfloat16':
        pytest.importorskip('ml_dtypes')
    model = _model('small_cnn', device)
    images = _images([(32, 32)] * 2)
    want = model.predict(images)
    got = model.predict(images, dtype=dtype)
    assert got.dtype == numpy.float32
    numpy.testing.assert_allclose(got, want, atol=TOLERANCE[dtype])
    assert numpy.abs(got - want).max() > 0  # the network did run in 16 bits


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
@pytest.mark.parametrize('name', ['espnet', 'ssd_tiny', 'yolov2_tiny'])
def test_network_outputs_in_low_precision_are_float32_and_close(name, dtype, device):
    if dtype == 'bfloat16':
        pytest.importorskip('ml_dtypes')
    from cvzoo.core import config

    model = _model(name, device)
    x = backend.to_device(numpy.stack([model.prepare(img) for img in _images([(40, 48)])]),
                          device)
    with config.using_config('train', False), config.no_backprop_mode():
        want = _outputs(network_runtime.run_network(model, x))
        got = _outputs(network_runtime.run_network(model, x, dtype=dtype))
    for g, w in zip(got, want):
        assert g.dtype == numpy.float32
        assert numpy.linalg.norm(g - w) <= TOLERANCE[dtype] * numpy.linalg.norm(w)
    assert any(numpy.abs(g - w).max() > 0 for g, w in zip(got, want))
    result = model.predict(_images([(40, 48)]), dtype=dtype)  # runs, float32 results
    assert all(a.dtype in (numpy.float32, numpy.int32) for a in _flat(result))


def _outputs(outputs):
    if isinstance(outputs, (tuple, list)):
        return [array for output in outputs for array in _outputs(output)]
    return [backend.to_numpy(outputs.array).copy()]


def test_graphed_low_precision_predict_equals_eager_low_precision(stand_in):
    model = _model('ssd_tiny', 'cuda:0')
    images = _images([(40, 48)] * 2)
    _assert_same(model.predict(images, cuda_graph=True, dtype='float16'),
                 model.predict(images, dtype='float16'))
