"""SqueezeNet 1.0 and 1.1 (torchvision's weights) against torchvision itself.

torchvision's own models, with random weights saved by torch.save, are loaded into cvzoo
through the 'imagenet' key (the path a downloaded file takes); logits, preprocessing
(resize 256, crop 224) and predict() must agree.
"""

import pytest

from tests.helpers import torchvision_classifiers as checks

pytestmark = pytest.mark.reference


@pytest.fixture(scope='module', params=['squeezenet1_0', 'squeezenet1_1'])
def pair(request, torchvision, tmp_path_factory):
    name = request.param
    net, model = checks.build_pair(torchvision, name, tmp_path_factory.mktemp(name))
    return name, net, model


def test_logits(pair, rng):
    _name, net, model = pair
    checks.check_logits(net, model, rng)


def test_preprocessing_and_entry_are_torchvisions(pair, rng, torchvision):
    name, _net, model = pair
    checks.check_preprocessing(torchvision, model, name, 'imagenet', checks.sample_images(rng))
    checks.check_entry(torchvision, name, 'imagenet')


# NOTE: slow for 1.0: two 224x224 forward passes on each side (~3 s here).
@pytest.mark.parametrize('pair', ['squeezenet1_1', pytest.param('squeezenet1_0',
                                                                 marks=pytest.mark.slow)],
                         indirect=True)
def test_predict(pair, rng, torchvision):
    name, net, model = pair
    checks.check_predict(torchvision, net, model, name, 'imagenet', checks.sample_images(rng))
