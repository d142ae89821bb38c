"""SSD300/SSD512 with ChainerCV's weights give ChainerCV's detections (ChainerCV 0.13.1).

ChainerCV builds the model for 20 classes with seeded random weights (its own
initialisers, through NumPy's global RNG), sharpens the conf heads so that some but not
all (box, class) pairs pass each preset's threshold, and saves it with
``chainer.serializers.save_npz`` under the entry's file name, as its published files
were saved. cvzoo loads that file through the ``voc0712`` entry from a weights mirror,
as a download. Both predict two images of other sizes with both presets; the prepared
input and the raw head outputs are compared too, so that a mismatch can be located.

One ChainerCV forward pass of SSD300 takes 10-30 s on this machine, so these tests are
slow.
"""


import numpy
import pytest

from cvzoo.models.detection.ssd import ssd
from tests.helpers import chainercv_reference_tools as tools


pytestmark = [pytest.mark.reference, pytest.mark.slow]

SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(SEED)
model = getattr(chainercv.links, MODEL)(n_fg_class=20)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    model(numpy.zeros((1, 3, model.insize, model.insize), numpy.float32))  # lazy weights
# Sharp, background-leaning class logits: most anchors are background, a few score high.
for conf in model.multibox.conf:
    conf.W.array[...] *= CONF_SCALE
    conf.b.array.reshape(-1, 21)[:, 0] += BACKGROUND_BIAS
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
imgs = [INPUTS['img0'], INPUTS['img1']]
forward = model.forward
def recording_forward(x):
    mb_locs, mb_confs = forward(x)
    OUTPUTS.setdefault('x', x.array)
    OUTPUTS.setdefault('mb_locs', mb_locs.array)
    OUTPUTS.setdefault('mb_confs', mb_confs.array)
    return mb_locs, mb_confs
model.forward = recording_forward
'''

# NOTE: scores must not saturate: equal float32 scores (0.9999998 for many anchors) are
# visited by ChainerCV's NMS in an order NumPy leaves undefined beyond 16 candidates.
CASES = [(ssd.SSD300, 'SSD300', 10.0, 25.0), (ssd.SSD512, 'SSD512', 5.0, 12.0)]


@pytest.mark.parametrize('model_class, name, conf_scale, background_bias', CASES,
                         ids=[case[1] for case in CASES])
def test_detections_equal_chainercv(chainercv_reference, chainercv_detection, tmp_path,
                                    monkeypatch, rng, model_class, name, conf_scale,
                                    background_bias):
    imgs = chainercv_detection.images(rng)
    file_name = model_class.weights['voc0712'].url.rsplit('/', 1)[1]
    outputs = tools.run(
        chainercv_reference, SCRIPT + chainercv_detection.PREDICT_BOTH_PRESETS, tmp_path,
        {'SEED': 0, 'MODEL': name, 'FILE_NAME': file_name, 'CONF_SCALE': conf_scale,
         'BACKGROUND_BIAS': background_bias}, **imgs)
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, 'voc0712')
    imgs = [imgs['img0'], imgs['img1']]

    x = numpy.stack([model.prepare(img) for img in imgs])
    numpy.testing.assert_allclose(x, outputs['x'], rtol=0, atol=1e-3)
    mb_locs, mb_confs = tools.forward(model, x)
    tools.assert_features_close(mb_locs[..., [1, 0, 3, 2]], outputs['mb_locs'],
                                name='mb_locs (y-first)')
    tools.assert_features_close(mb_confs, outputs['mb_confs'], name='mb_confs')

    for preset in ('evaluate', 'visualize'):
        model.use_preset(preset)
        result = model.predict(imgs)
        assert all(len(score) > 0 for score in result[2]), preset
        chainercv_detection.assert_same_detections(outputs, preset, result,
                                                   box_convention=model.box_convention)
    n_evaluate = sum(len(outputs[f'evaluate/score/{i}']) for i in range(2))
    n_visualize = sum(len(outputs[f'visualize/score/{i}']) for i in range(2))
    assert n_evaluate > n_visualize > 0
