"""LR-ASPP MobileNetV3-Large against torchvision's own ``lraspp_mobilenet_v3_large``.

torchvision's model, built as its published 'COCO_WITH_VOC_LABELS_V1' weights are (21
classes, no auxiliary head) with random weights saved by torch.save, is loaded into cvzoo
through the 'coco_voc' key (the path a downloaded file takes); the scores, the preset,
the preprocessing and predict()'s label maps must agree.
"""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    'cvzoo_tests_torchvision_segmenters',
    pathlib.Path(__file__).parents[1] / 'torchvision_segmenters.py')
checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checks)

pytestmark = pytest.mark.reference
NAME = 'lraspp_mobilenet_v3_large'


@pytest.fixture(scope='module')
def pair(torchvision, tmp_path_factory):
    net, model = checks.build_pair(torchvision, NAME, tmp_path_factory.mktemp(NAME), aux=False)
    return net, model


def test_scores(pair, rng):
    net, model = pair
    checks.check_logits(net, model, rng, aux=False)


def test_preset_and_preprocessing_are_torchvisions(pair, rng, torchvision):
    _net, model = pair
    checks.check_preset(torchvision, NAME)
    checks.check_preprocessing(torchvision, model, checks.sample_images(rng))


def test_predict(pair, rng, torchvision):
    net, model = pair
    checks.check_predict(torchvision, net, model, checks.sample_images(rng))
