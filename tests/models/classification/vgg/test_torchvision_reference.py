"""VGG16 with torchvision's weights ('imagenet') against torchvision itself.

torchvision's own VGG16, with random weights saved by torch.save, is loaded into cvzoo
through the 'imagenet' key (the path a downloaded file takes); logits (on 64x64, where the
7x7 adaptive average pooling repeats cells), preprocessing and predict() must agree.
"""

import pytest

from tests.helpers import torchvision_classifiers as checks


# NOTE: slow: the 528 MB file of VGG16's 138M parameters takes ~30 s to build, write,
# convert and load here; the preprocessing is ImageClassifier's, checked by the others.
pytestmark = [pytest.mark.reference, pytest.mark.slow]


@pytest.fixture(scope='module')
def pair(torchvision, tmp_path_factory):
    net, model = checks.build_pair(torchvision, 'vgg16', tmp_path_factory.mktemp('vgg16'))
    return 'vgg16', net, model


def test_logits(pair, rng):
    _name, net, model = pair
    checks.check_logits(net, model, rng)


def test_predict_preprocessing_and_entry(pair, rng, torchvision):
    name, net, model = pair
    imgs = checks.sample_images(rng)
    checks.check_entry(torchvision, name, 'imagenet')
    checks.check_preprocessing(torchvision, model, name, 'imagenet', imgs)
    checks.check_predict(torchvision, net, model, name, 'imagenet', imgs)
