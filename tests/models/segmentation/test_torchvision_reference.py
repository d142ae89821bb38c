"""FCN-ResNet50/101, DeepLabV3-ResNet50/101 and LR-ASPP MobileNetV3-Large against
torchvision's own models.

torchvision's models, built as their published 'COCO_WITH_VOC_LABELS_V1' weights are (21
classes; an auxiliary head except LR-ASPP) with random weights saved by torch.save, are
loaded into cvzoo through the 'coco_voc' key (the path a downloaded file takes); the main
(and auxiliary) scores, the preset, the preprocessing and predict()'s label maps must
agree.
"""

import pytest

from tests.helpers import torchvision_segmenters as checks

pytestmark = pytest.mark.reference
_SLOW = pytest.mark.slow
# NOTE: slow: a ResNet-101 file takes ~20 s to build, write, convert and load here.
MODELS = ('fcn_resnet50', pytest.param('fcn_resnet101', marks=_SLOW),
          'deeplabv3_resnet50', pytest.param('deeplabv3_resnet101', marks=_SLOW),
          'lraspp_mobilenet_v3_large')
# NOTE: slow: two forward passes of a dilated ResNet on each side (~10 s here); LR-ASPP
# runs the same SegmentationModel.predict in the default run.
PREDICT_MODELS = (pytest.param('fcn_resnet50', marks=_SLOW),
                  pytest.param('fcn_resnet101', marks=_SLOW),
                  pytest.param('deeplabv3_resnet50', marks=_SLOW),
                  pytest.param('deeplabv3_resnet101', marks=_SLOW),
                  'lraspp_mobilenet_v3_large')


def _has_aux(name):
    return not name.startswith('lraspp')


@pytest.fixture(scope='module')
def pairs(torchvision, tmp_path_factory):
    """name -> (torchvision net, cvzoo model), built once per name."""
    built = {}

    def get(name):
        if name not in built:
            built[name] = checks.build_pair(torchvision, name, tmp_path_factory.mktemp(name),
                                            aux=_has_aux(name))
        return built[name]
    return get


@pytest.mark.parametrize('name', MODELS)
def test_scores(name, pairs, rng):
    net, model = pairs(name)
    checks.check_logits(net, model, rng, aux=_has_aux(name))


@pytest.mark.parametrize('name', MODELS)
def test_preset_and_preprocessing_are_torchvisions(name, pairs, rng, torchvision):
    _net, model = pairs(name)
    checks.check_preset(torchvision, name)
    checks.check_preprocessing(torchvision, model, checks.sample_images(rng))


@pytest.mark.parametrize('name', PREDICT_MODELS)
def test_predict(name, pairs, rng, torchvision):
    net, model = pairs(name)
    checks.check_predict(torchvision, net, model, checks.sample_images(rng))
