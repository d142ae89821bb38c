"""A classifier's predict() inside ``autocast``: the network runs in 16 bits, predict() still returns
float32 NumPy, close to the float32 answer (random weights, so a loose bound)."""

import numpy
import pytest

from cvzoo.core import autocast
from cvzoo.testing.small_models import build_small_model

# classifier: (input side, largest allowed difference of any probability); MobileNetV2
# has depthwise convolutions, batch norms and residual adds
CASES = {'small_cnn': (32, 0.02), 'mobilenet_v2': (64, 0.02)}


@pytest.mark.parametrize('low', ['float16', 'bfloat16'])
@pytest.mark.parametrize('name', list(CASES))
def test_predict_under_autocast(name, low, device):
    if low == 'bfloat16':
        pytest.importorskip('ml_dtypes')
    side, tolerance = CASES[name]
    _, model = build_small_model(name)
    rng = numpy.random.RandomState(0)
    # a zero-initialised head would give uniform answers whatever the precision
    for param in model.params(include_uninit=False):
        param.array += rng.normal(scale=0.05, size=param.shape).astype(param.dtype)
    model.to_device(device)
    img = rng.uniform(0, 255, (3, side, side)).astype(numpy.float32)
    want = model.predict([img])
    with autocast(low):
        got = model.predict([img])
    assert got.dtype == numpy.float32
    numpy.testing.assert_allclose(got, want, atol=tolerance)
    assert numpy.abs(got - want).max() > 0  # the network did run in 16 bits
