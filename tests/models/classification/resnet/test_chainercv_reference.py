"""ResNet with ChainerCV's weights gives ChainerCV's outputs (ChainerCV 0.13.1 reference).

ChainerCV builds the model with seeded random weights (batch norms calibrated so the
activations stay informative) and saves it as its published files are saved; cvzoo loads
that file through its weights entry, as a download, and both predict the same image with
ChainerCV's preprocessing (scale the shorter side, center crop, the entry's mean). The
crop is 56 of 64 instead of 224 of 256 to stay fast; 56 still makes pool1's last window
hang over the edge, so ``cover_all`` matters.

Features agree to 1e-4 of their range for ResNet-50 (measured: 6e-6); ResNet-101/152
chain 33/50 blocks whose batch norms divide by variances near eps, and float32 rounding
in a different summation order grows to 1.1e-4 of the range in ResNet-152's res4
(measured), so they get 5e-4. A wrong eps or pooling moves them by far more (eps 1e-5
instead of 2e-5 changes res4 of ResNet-50 twenty-fold).
"""


import numpy
import pytest

from cvzoo.models.classification.resnet import resnet
from tests.helpers import chainercv_reference_tools as tools


pytestmark = pytest.mark.reference

CROP_SIZE, SCALE_SIZE = 56, 64
FEATURES = ('pool1', 'res4', 'fc6')
SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(0)
model = getattr(chainercv.links, MODEL)(arch=ARCH)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
OUTPUTS.update(classifier_reference(
    model, 'fc6', CROP_SIZE, SCALE_SIZE, FEATURES, INPUTS['imgs'],
    os.path.join(WORKDIR, 'mirror', FILE_NAME)))
'''

CASES = [
    pytest.param(resnet.ResNet50, 'imagenet_he', 'he', id='resnet50-he'),
    pytest.param(resnet.ResNet50, 'imagenet_chainercv', 'fb', id='resnet50-fb'),
    pytest.param(resnet.ResNet101, 'imagenet_he', 'he', id='resnet101-he',
                 marks=pytest.mark.slow),
    pytest.param(resnet.ResNet101, 'imagenet_chainercv', 'fb', id='resnet101-fb',
                 marks=pytest.mark.slow),
    pytest.param(resnet.ResNet152, 'imagenet_he', 'he', id='resnet152-he',
                 marks=pytest.mark.slow),
    pytest.param(resnet.ResNet152, 'imagenet_chainercv', 'fb', id='resnet152-fb',
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize(('model_class', 'key', 'arch'), CASES)
def test_predict_equals_chainercv(model_class, key, arch, chainercv_reference, tmp_path,
                                  monkeypatch, rng):
    imgs = rng.uniform(0, 255, (1, 3, 67, 90)).astype(numpy.float32)
    entry = model_class.weights[key]
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'MODEL': model_class.__name__, 'ARCH': arch, 'FILE_NAME': entry.main_file.file_name,
        'CROP_SIZE': CROP_SIZE, 'SCALE_SIZE': SCALE_SIZE, 'FEATURES': FEATURES}, imgs=imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, key)
    # The entry's preset is ChainerCV's evaluation: its mean, shorter side 256, crop 224.
    numpy.testing.assert_allclose(model.preset.mean, reference['mean'].ravel(), rtol=1e-6)
    assert model.preset.std == (1.0, 1.0, 1.0)
    assert (model.preset.size, model.preset.crop_fraction) == (224, 224 / 256)
    ours = tools.classifier_outputs(model, imgs, CROP_SIZE, SCALE_SIZE, FEATURES)

    numpy.testing.assert_allclose(ours['prepared'], reference['prepared'], atol=1e-3)
    rtol = 1e-4 if model_class is resnet.ResNet50 else 5e-4
    for name in FEATURES:
        tools.assert_features_close(ours[name], reference[name], rtol, name=name)
    assert 0.02 < reference['probs'].max() < 0.99  # informative: not uniform, not one-hot
    numpy.testing.assert_allclose(ours['probs'], reference['probs'], atol=1e-4)
