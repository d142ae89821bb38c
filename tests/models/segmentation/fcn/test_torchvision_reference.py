"""FCN-ResNet50/101 against torchvision's own models.

torchvision's models, built as their published 'COCO_WITH_VOC_LABELS_V1' weights are (21
classes, auxiliary head) with random weights saved by torch.save, are loaded into cvzoo
through the 'coco_voc' key (the path a downloaded file takes); the main and auxiliary
scores, the preset, the preprocessing and predict()'s label maps must agree.
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
# NOTE: slow: the ResNet-101 file takes ~20 s to build, write, convert and load here.
NAMES = ('fcn_resnet50', pytest.param('fcn_resnet101', marks=pytest.mark.slow))


@pytest.fixture(scope='module', params=NAMES)
def pair(request, torchvision, tmp_path_factory):
    name = request.param
    net, model = checks.build_pair(torchvision, name, tmp_path_factory.mktemp(name))
    return name, net, model


def test_main_and_aux_scores(pair, rng):
    _name, net, model = pair
    checks.check_logits(net, model, rng)


def test_preset_and_preprocessing_are_torchvisions(pair, rng, torchvision):
    name, _net, model = pair
    checks.check_preset(torchvision, name)
    checks.check_preprocessing(torchvision, model, checks.sample_images(rng))


# NOTE: slow: two forward passes of a dilated ResNet on each side (~10 s here); LR-ASPP's
# test runs the same SegmentationModel.predict in the default run.
@pytest.mark.slow
def test_predict(pair, rng, torchvision):
    _name, net, model = pair
    checks.check_predict(torchvision, net, model, checks.sample_images(rng))
