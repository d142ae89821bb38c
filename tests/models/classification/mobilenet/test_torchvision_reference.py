"""MobileNetV2 and MobileNetV3-Large (torchvision flavour) against torchvision itself.

torchvision's own models, with random weights saved by torch.save, are loaded into cvzoo
through the 'imagenet' key (the path a downloaded file takes); logits, preprocessing of
both keys ('imagenet': resize 256, 'imagenet_v2': resize 232; crop 224) and predict()
must agree.
"""

import numpy
import pytest

from tests.helpers import mobilenet_layout
from tests.helpers import torchvision_classifiers as checks

pytestmark = pytest.mark.reference
KEYS = ('imagenet', 'imagenet_v2')


@pytest.fixture(scope='module', params=['mobilenet_v2', 'mobilenet_v3_large'])
def pair(request, torchvision, tmp_path_factory):
    name = request.param
    net, model = checks.build_pair(torchvision, name, tmp_path_factory.mktemp(name))
    return name, net, model


def test_spelled_out_layout_is_torchvisions(pair):
    """mobilenet_layout.py (used by the torch-free tests) names and shapes every array
    of torchvision's state dict."""
    name, net, _model = pair
    spelled_out = getattr(mobilenet_layout, f'{name}_state')(numpy.random.default_rng(0))
    real = net.state_dict()
    assert list(spelled_out) == list(real)
    assert [v.shape for v in spelled_out.values()] == [tuple(v.shape) for v in real.values()]


def test_logits(pair, rng):
    _name, net, model = pair
    checks.check_logits(net, model, rng)


@pytest.mark.parametrize('key', KEYS)
def test_preprocessing_is_torchvisions(pair, key, rng, torchvision):
    name, _net, model = pair
    checks.check_preprocessing(torchvision, model, name, key, checks.sample_images(rng))


@pytest.mark.parametrize('key', KEYS)
def test_entry_is_torchvisions(pair, key, torchvision):
    checks.check_entry(torchvision, pair[0], key)


# NOTE: slow except one: two 224x224 forward passes on each side (2-4 s each here); the
# preprocessing and the networks are checked apart above.
@pytest.mark.parametrize('pair, key', [
    ('mobilenet_v3_large', 'imagenet'),
    pytest.param('mobilenet_v3_large', 'imagenet_v2', marks=pytest.mark.slow),
    pytest.param('mobilenet_v2', 'imagenet', marks=pytest.mark.slow),
    pytest.param('mobilenet_v2', 'imagenet_v2', marks=pytest.mark.slow)], indirect=['pair'])
def test_predict(pair, key, rng, torchvision):
    name, net, model = pair
    checks.check_predict(torchvision, net, model, name, key, checks.sample_images(rng))
