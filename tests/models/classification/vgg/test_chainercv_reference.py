"""VGG16 with ChainerCV's weights gives ChainerCV's outputs (ChainerCV 0.13.1 reference).

ChainerCV builds VGG16 with seeded random weights (He-normal, random biases) and saves it
as its published file is saved; cvzoo loads the file through the ``imagenet_chainercv``
entry (the zoo mirror) and both predict the same image with ChainerCV's preprocessing.
ChainerCV's fc6 takes 512x7x7, so the crop must leave pool5 at 7x7: 224 of 256 (its
evaluation) or 200 of 208, where ChainerCV's ``cover_all`` poolings (25 -> 13 -> 7) and
poolings that drop the odd row (25 -> 12 -> 6) part ways. The file is 528 MB: slow.
"""


import numpy
import pytest

from cvzoo.models.classification.vgg import vgg16
from tests.helpers import chainercv_reference_tools as tools


pytestmark = [pytest.mark.reference, pytest.mark.slow]

FEATURES = ('pool4', 'conv5_3', 'pool5', 'fc8')
SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(0)
model = chainercv.links.VGG16(initialW=chainer.initializers.HeNormal(),
                              initial_bias=chainer.initializers.Uniform(0.1))
os.makedirs(os.path.join(WORKDIR, 'mirror'))
OUTPUTS.update(classifier_reference(
    model, 'fc8', CROP_SIZE, SCALE_SIZE, FEATURES, INPUTS['imgs'],
    os.path.join(WORKDIR, 'mirror', FILE_NAME)))
'''


@pytest.mark.parametrize(('crop_size', 'scale_size'), [(200, 208), (224, 256)])
def test_predict_equals_chainercv(crop_size, scale_size, chainercv_reference, tmp_path,
                                  monkeypatch, rng):
    imgs = rng.uniform(0, 255, (1, 3, 240, 210)).astype(numpy.float32)
    entry = vgg16.VGG16.weights['imagenet_chainercv']
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'FILE_NAME': entry.main_file.file_name, 'CROP_SIZE': crop_size,
        'SCALE_SIZE': scale_size, 'FEATURES': FEATURES}, imgs=imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', vgg16.VGG16,
                                   'imagenet_chainercv')
    # The entry's preset is ChainerCV's evaluation: its mean, shorter side 256, crop 224.
    numpy.testing.assert_allclose(model.preset.mean, reference['mean'].ravel(), rtol=1e-6)
    assert model.preset.std == (1.0, 1.0, 1.0)
    assert (model.preset.size, model.preset.crop_fraction) == (224, 224 / 256)
    ours = tools.classifier_outputs(model, imgs, crop_size, scale_size, FEATURES)

    numpy.testing.assert_allclose(ours['prepared'], reference['prepared'], atol=1e-3)
    for name in FEATURES:
        tools.assert_features_close(ours[name], reference[name], name=name)
    assert 0.02 < reference['probs'].max() < 0.99  # informative: not uniform, not one-hot
    numpy.testing.assert_allclose(ours['probs'], reference['probs'], atol=1e-4)
