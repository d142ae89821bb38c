"""DeepLabV3+ Xception-65 with ChainerCV's weights gives ChainerCV's outputs (0.13.1).

ChainerCV builds the model with the ``voc`` entry's batch-norm settings (eps 1e-3 in the
backbone, 1e-5 after it) and seeded random weights (batch norms calibrated so the
activations stay informative), at ``min_input_size`` 33 instead of 513 (odd, like the
published sizes), and saves it as its published files are saved; cvzoo loads the file
through the ``voc`` entry (the zoo mirror) with the same minimum size. Both predict a
30x40 image (padded at the bottom with the mean) and a 45x50 one, each with its mirror
image (``flip=True``); the probabilities, the label maps and the logits of one
preprocessed input must agree.

ChainerCV 0.13.1's predict() divides the summed probabilities by ``2 * len(scales)``
without the flip and by ``len(scales)`` with it (the two cases are swapped), which
scales them but never changes a label; the test averages its ``_get_proba`` outputs
itself. Tolerances as in the PSPNet test: logits 1e-4 of their range, probabilities
5e-4 (a quarter of the logits' error), labels flip only where the two best
probabilities are that close.
"""


import numpy
import pytest

from cvzoo.models.segmentation.deeplab import deeplab_v3_plus
from tests.helpers import chainercv_reference_tools as tools


pytestmark = pytest.mark.reference

MIN_INPUT_SIZE = 33
SIZES = ((30, 40), (45, 50))
SCRIPT = '''
import os
from chainercv.links import DeepLabV3plusXception65
numpy.random.seed(0)
param = DeepLabV3plusXception65._models['voc']['param']
model = DeepLabV3plusXception65(
    n_class=21, min_input_size=MIN_INPUT_SIZE, flip=True,
    **{k: param[k] for k in ('extractor_kwargs', 'aspp_kwargs', 'decoder_kwargs')})
x = random_batch((2, 3, 48, 48)) / 120
calibrate_batch_normalization(model, model, x)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    center_linear_output(model.decoder.conv_logits, model(x).array)
    scale_linear_output(model.decoder.conv_logits, model(x).array)
    OUTPUTS['logits'] = model(INPUTS['x']).array
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
for i, name in enumerate(IMGS):
    img = INPUTS[name]
    OUTPUTS[f'label{i}'] = model.predict([img])[0]
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        OUTPUTS[f'score{i}'] = (model._get_proba(img, 1.0, False)
                                + model._get_proba(img, 1.0, True)) / 2
'''


def test_predict_equals_chainercv(chainercv_reference, tmp_path, monkeypatch, rng):
    imgs = {f'img{i}': rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for i, size in enumerate(SIZES)}
    x = rng.uniform(-1, 1, (1, 3, 41, 41)).astype(numpy.float32)
    model_class = deeplab_v3_plus.DeepLabV3plusXception65
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'FILE_NAME': model_class.weights['voc'].main_file.file_name,
        'MIN_INPUT_SIZE': MIN_INPUT_SIZE, 'IMGS': tuple(imgs)}, x=x, **imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, 'voc',
                                   min_input_size=MIN_INPUT_SIZE, flip=True)
    tools.assert_features_close(tools.forward(model, x), reference['logits'], name='logits')
    labels = model.predict(list(imgs.values()))
    for i, img in enumerate(imgs.values()):
        score = tools.forward(model.scores, img)
        numpy.testing.assert_allclose(score, reference[f'score{i}'], atol=5e-4)
        assert len(numpy.unique(reference[f'label{i}'])) > 5  # informative
        tools.assert_labels_equal(labels[i], reference[f'label{i}'], reference[f'score{i}'],
                                  tie=5e-4)
