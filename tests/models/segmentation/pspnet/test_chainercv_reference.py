"""PSPNet with ChainerCV's weights gives ChainerCV's outputs (ChainerCV 0.13.1 reference).

ChainerCV's experimental PSPNet is built with seeded random weights (batch norms
calibrated so the activations stay informative) at input size 72 instead of 713 (both
APIs take ``input_size``; 72 // 8 = 9 makes the pyramid windows 9, 3, 2 and 1 with
floored 3x3 and 2x2 grids) and saved as its published files are saved; cvzoo loads the
file through the ``cityscapes`` entry (the zoo mirror) with the same input size. Both
predict a 72x100 image (two sliding windows, each with its mirror image) and a 50x60
image (centred on a zero canvas); the averaged softmax scores and the label maps must
agree, and so must the logits of one preprocessed 72x72 input.

Tolerances: the logits agree to 1e-4 of their largest magnitude for ResNet-50
(measured 4e-5: float32 rounding through 16 blocks of batch norms that divide by
variances near eps) and 5e-4 for ResNet-101 (33 blocks; measured 2.7e-4, as in the
classification references); a softmax probability moves by at most 1/4 of the largest
change between two logits, so the probabilities get ``rtol * (max - min) / 4`` of the
logits (ResNet-50: about 7e-4, measured 1.6e-4), and a label may flip only where the two
best probabilities are closer than that.
"""


import numpy
import pytest

from cvzoo.models.segmentation.pspnet import pspnet
from tests.helpers import chainercv_reference_tools as tools


pytestmark = pytest.mark.reference

INPUT_SIZE = 72
SIZES = ((72, 100), (50, 60))
SCRIPT = '''
import os
import chainercv.experimental.links
numpy.random.seed(0)
model = getattr(chainercv.experimental.links, MODEL)(n_class=19, input_size=INPUT_SIZE)
x = random_batch((2, 3, INPUT_SIZE, INPUT_SIZE))
calibrate_batch_normalization(model, model, x)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    center_linear_output(model.head_conv2, model(x).array)
    scale_linear_output(model.head_conv2, model(x).array)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
OUTPUTS['mean'] = model.mean
with chainer.using_config('train', False), chainer.no_backprop_mode():
    OUTPUTS['logits'] = model(INPUTS['x']).array
for i, name in enumerate(IMGS):
    OUTPUTS[f'label{i}'] = model.predict([INPUTS[name]])[0]
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        OUTPUTS[f'score{i}'] = model._tile_predict(INPUTS[name])
'''

CASES = [
    pytest.param(pspnet.PSPNetResNet50, 1e-4, id='pspnet_resnet50'),
    pytest.param(pspnet.PSPNetResNet101, 5e-4, id='pspnet_resnet101', marks=pytest.mark.slow),
]


@pytest.mark.parametrize(('model_class', 'rtol'), CASES)
def test_predict_equals_chainercv(model_class, rtol, chainercv_reference, tmp_path,
                                  monkeypatch, rng):
    imgs = {f'img{i}': rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for i, size in enumerate(SIZES)}
    x = rng.uniform(-120, 120, (1, 3, INPUT_SIZE, INPUT_SIZE)).astype(numpy.float32)
    entry = model_class.weights['cityscapes']
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'MODEL': model_class.__name__, 'FILE_NAME': entry.main_file.file_name,
        'INPUT_SIZE': INPUT_SIZE, 'IMGS': tuple(imgs)}, x=x, **imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class,
                                   'cityscapes', input_size=INPUT_SIZE)
    numpy.testing.assert_allclose(model.preset.mean, reference['mean'].ravel(), rtol=1e-6)
    assert model.preset.std == (1.0, 1.0, 1.0) and model.channel_order == 'rgb'
    logits = reference['logits']
    tools.assert_features_close(tools.forward(model, x), logits, rtol, name='logits')
    prob_atol = rtol * float(logits.max() - logits.min()) / 4
    labels = model.predict(list(imgs.values()))
    for i, img in enumerate(imgs.values()):
        score = tools.forward(model.scores, img)
        numpy.testing.assert_allclose(score, reference[f'score{i}'], atol=prob_atol)
        assert len(numpy.unique(reference[f'label{i}'])) > 5  # informative
        tools.assert_labels_equal(labels[i], reference[f'label{i}'], reference[f'score{i}'],
                                  tie=prob_atol)
