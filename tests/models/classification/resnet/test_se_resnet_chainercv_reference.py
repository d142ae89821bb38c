"""SE-ResNet and SE-ResNeXt with ChainerCV's weights give ChainerCV's outputs.

As tests/models/classification/resnet/test_chainercv_reference.py: ChainerCV 0.13.1
builds the model with seeded random weights and saves it as its published files are
saved; cvzoo loads the file through the weights entry (the zoo mirror) and both predict
the same image with ChainerCV's preprocessing at crop 56 of 64 (pool1's ``cover_all``
matters there). The SE gates are compared through the features after every stage.
Tolerances as in the ResNet test: 1e-4 of the range for the 50-layer models, 5e-4 for
the deeper ones (float32 rounding through batch norms near eps).
"""


import numpy
import pytest

from cvzoo.models.classification.resnet import se_resnet, se_resnext
from tests.helpers import chainercv_reference_tools as tools

pytestmark = pytest.mark.reference

CROP_SIZE, SCALE_SIZE = 56, 64
FEATURES = ('pool1', 'res2', 'res4', 'fc6')
SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(0)
model = getattr(chainercv.links, MODEL)()
os.makedirs(os.path.join(WORKDIR, 'mirror'))
OUTPUTS.update(classifier_reference(
    model, 'fc6', CROP_SIZE, SCALE_SIZE, FEATURES, INPUTS['imgs'],
    os.path.join(WORKDIR, 'mirror', FILE_NAME)))
'''

CASES = [
    pytest.param(se_resnet.SEResNet50, id='se_resnet50'),
    pytest.param(se_resnext.SEResNeXt50, id='se_resnext50'),
    pytest.param(se_resnet.SEResNet101, id='se_resnet101', marks=pytest.mark.slow),
    pytest.param(se_resnet.SEResNet152, id='se_resnet152', marks=pytest.mark.slow),
    pytest.param(se_resnext.SEResNeXt101, id='se_resnext101', marks=pytest.mark.slow),
]


@pytest.mark.parametrize('model_class', CASES)
def test_predict_equals_chainercv(model_class, chainercv_reference, tmp_path, monkeypatch,
                                  rng):
    imgs = rng.uniform(0, 255, (1, 3, 90, 67)).astype(numpy.float32)
    entry = model_class.weights['imagenet']
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'MODEL': model_class.__name__, 'FILE_NAME': entry.main_file.file_name,
        'CROP_SIZE': CROP_SIZE, 'SCALE_SIZE': SCALE_SIZE, 'FEATURES': FEATURES}, imgs=imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, 'imagenet')
    # The entry's preset is ChainerCV's evaluation: its mean, shorter side 256, crop 224.
    numpy.testing.assert_allclose(model.preset.mean, reference['mean'].ravel(), rtol=1e-6)
    assert model.preset.std == (1.0, 1.0, 1.0)
    assert (model.preset.size, model.preset.crop_fraction) == (224, 224 / 256)
    ours = tools.classifier_outputs(model, imgs, CROP_SIZE, SCALE_SIZE, FEATURES)

    numpy.testing.assert_allclose(ours['prepared'], reference['prepared'], atol=1e-3)
    rtol = 1e-4 if model_class in (se_resnet.SEResNet50, se_resnext.SEResNeXt50) else 5e-4
    for name in FEATURES:
        tools.assert_features_close(ours[name], reference[name], rtol, name=name)
    assert 0.02 < reference['probs'].max() < 0.99  # informative: not uniform, not one-hot
    numpy.testing.assert_allclose(ours['probs'], reference['probs'], atol=1e-4)
