"""ResNet-50/101/152 and ResNeXt-50 (torchvision flavour) against torchvision itself.

torchvision's own models, with random weights saved by torch.save, are loaded into cvzoo
through the 'imagenet' key (the path a downloaded file takes); logits, preprocessing of
both keys ('imagenet': resize 256, 'imagenet_v2': resize 232; crop 224) and predict()
must agree.
"""

import numpy
import pytest

from tests.helpers import classifier_weight_files
from tests.helpers import torchvision_classifiers as checks

pytestmark = pytest.mark.reference
# arguments of classifier_weight_files.torchvision_resnet_state that spell out each model
LAYOUTS = {'resnet50': {}, 'resnet101': {'blocks': (3, 4, 23, 3)},
           'resnet152': {'blocks': (3, 8, 36, 3)},
           'resnext50_32x4d': {'width': 128, 'groups': 32}}
KEYS = ('imagenet', 'imagenet_v2')
# NOTE: slow: each file takes 10-30 s to build, write, convert and load here (2 cores);
# ResNet-50 stands for the family in the default run.
NAMES = ('resnet50', pytest.param('resnext50_32x4d', marks=pytest.mark.slow),
         pytest.param('resnet101', marks=pytest.mark.slow),
         pytest.param('resnet152', marks=pytest.mark.slow))


@pytest.fixture(scope='module', params=NAMES)
def pair(request, torchvision, tmp_path_factory):
    name = request.param
    net, model = checks.build_pair(torchvision, name, tmp_path_factory.mktemp(name))
    return name, net, model


def test_spelled_out_layout_is_torchvisions(pair):
    """classifier_weight_files.py (used by the torch-free tests) names and shapes every
    array of torchvision's state dict."""
    name, net, _model = pair
    spelled_out = classifier_weight_files.torchvision_resnet_state(
        numpy.random.default_rng(0), **LAYOUTS[name])
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


# NOTE: slow: two 224x224 forward passes of ResNet-50 on each side (~7 s here); the
# preprocessing and the network are checked apart above in the default run.
@pytest.mark.slow
@pytest.mark.parametrize('pair', ['resnet50'], indirect=True)
@pytest.mark.parametrize('key', KEYS)
def test_predict(pair, key, rng, torchvision):
    name, net, model = pair
    checks.check_predict(torchvision, net, model, name, key, checks.sample_images(rng))
