"""FCISResNet101 with ChainerCV's weights gives ChainerCV's outputs (ChainerCV 0.13.1).

ChainerCV builds FCISResNet101 for SBD's 20 classes with seeded random weights, made
informative (batch norms calibrated on noise, tests/helpers/chainercv_reference_prelude.py;
RPN and head outputs scaled to a useful spread, class biases apart), predicts two images
with the 'evaluate' preset while recording the network's outputs, and saves the model
with ``chainer.serializers.save_npz`` under the 'sbd' entry's file name. cvzoo loads that
file through the key from a weights mirror, as a download, and compares the prepared
inputs, the RoIs of both head passes, the inside/outside scores, the offsets and the
class scores; then cvzoo's post-processing (min size, softmax, mask voting, pasting) on
ChainerCV's recorded outputs gives ChainerCV's instances: the same labels, scores and
masks.

ChainerCV resizes with OpenCV when it is installed (its published models were made so,
and cvzoo's mask voting follows OpenCV's bilinear rule); its environment here has no
OpenCV, so the script gives ChainerCV's FCIS modules a NumPy resize with OpenCV's rule
for the one-channel mask resizes (the input image keeps ChainerCV's Pillow resize, as
cvzoo's).

ChainerCV's CPU position-sensitive pooling loops in Python over every output value, so
both run small (shorter side 128, 8 RoIs per pass) and the test is slow.
"""


import numpy
import pytest

from cvzoo.core import config
from cvzoo.models.instance_segmentation.fcis import fcis_resnet101
from tests.helpers import chainercv_reference_tools as tools


pytestmark = [pytest.mark.reference, pytest.mark.slow]

SCRIPT = '''
import os
import chainer.functions as F
from chainercv.experimental.links import FCISResNet101
import chainercv.experimental.links.model.fcis.fcis as fcis_module
import chainercv.experimental.links.model.fcis.utils.mask_voting as mask_voting_module
numpy.bool = bool  # NOTE: ChainerCV 0.13.1's predict() still uses the removed alias
def opencv_taps(n_in, n_out):
    sample = ((numpy.arange(n_out) + 0.5) * (n_in / n_out) - 0.5).astype(numpy.float32)
    low = numpy.floor(sample)
    frac = sample - low
    low = low.astype(int)
    frac = numpy.where((low < 0) | (low >= n_in - 1), 0, frac).astype(numpy.float32)
    low = numpy.clip(low, 0, n_in - 1)
    return low, numpy.minimum(low + 1, n_in - 1), frac
pillow_resize = fcis_module.resize
def resize(img, size, interpolation=2):
    if img.shape[0] != 1:  # the input image
        return pillow_resize(img, size, interpolation)
    low_y, high_y, frac_y = opencv_taps(img.shape[1], size[0])
    low_x, high_x, frac_x = opencv_taps(img.shape[2], size[1])
    rows = img[:, :, low_x] * (1 - frac_x) + img[:, :, high_x] * frac_x
    return (rows[:, low_y] * (1 - frac_y)[:, None]
            + rows[:, high_y] * frac_y[:, None]).astype(numpy.float32)
fcis_module.resize = mask_voting_module.resize = resize
numpy.random.seed(SEED)
model = FCISResNet101(
    n_fg_class=20, min_size=MIN_SIZE, max_size=MAX_SIZE,
    proposal_creator_params={'nms_thresh': 0.7, 'n_train_pre_nms': 6000,
                             'n_train_post_nms': 300, 'n_test_pre_nms': 6000,
                             'n_test_post_nms': N_ROI, 'force_cpu_nms': False,
                             'min_size': 16})
e = model.extractor
def extract(x):  # the extractor's forward keeps its norms in test mode
    return e.res5(e.res4(e.res3(e.res2(e.pool1(e.conv1(x))))))
calibrate_batch_normalization(model, extract, random_batch((2, 3, MIN_SIZE, MIN_SIZE)))
imgs = [INPUTS['img0'], INPUTS['img1']]
x = model.prepare(imgs[0])[None]
scales = [x.shape[3] / imgs[0].shape[2]]
def rpn_outputs():
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        res4, res5 = model.extractor(x)
        return res5, model.rpn(res4, x.shape[2:], scales)
_, (rpn_locs, rpn_scores, _, _, _) = rpn_outputs()
scale_linear_output(model.rpn.loc, rpn_locs.array, std=0.2)
scale_linear_output(model.rpn.score, rpn_scores.array, std=2.0)
res5, _ = rpn_outputs()
with chainer.using_config('train', False), chainer.no_backprop_mode():
    h = F.relu(model.head.conv1(res5))
    cls_seg, ag_loc = model.head.cls_seg(h), model.head.ag_loc(h)
scale_linear_output(model.head.cls_seg, cls_seg.array, std=2.0)
# offsets that move the second pass's RoIs by more than a feature pixel: RoIs that pool
# the same integer bins score alike, and NumPy orders equal scores as it likes
scale_linear_output(model.head.ag_loc, ag_loc.array, std=2.0)
# classes apart, so that the scores of a RoI do not all sit near 1 / 21
model.head.cls_seg.b.array.reshape(21, 2, 49)[...] += numpy.random.uniform(-3, 3, (21, 1, 1))
forward = model.forward
calls = []
def recording_forward(x, scales=None):
    outputs = forward(x, scales=scales)
    i = len(calls)
    calls.append(i)
    OUTPUTS[f'x/{i}'] = x.array[0]
    for name, value in zip(('seg', 'locs', 'cls', 'rois'), outputs[:4]):
        OUTPUTS[f'{name}/{i}'] = getattr(value, 'array', value)
    return outputs
model.forward = recording_forward
model.use_preset('evaluate')
masks, labels, scores = model.predict(imgs)
for i, (mask, label, score) in enumerate(zip(masks, labels, scores)):
    OUTPUTS[f'masks/{i}'] = mask
    OUTPUTS[f'labels/{i}'] = label
    OUTPUTS[f'scores/{i}'] = numpy.asarray(score, numpy.float32)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
'''

SIZES = {'MIN_SIZE': 128, 'MAX_SIZE': 192}
N_ROI = 8


def _compare_network_outputs(model, imgs, outputs):
    for i, img in enumerate(imgs):
        x = model.prepare(img)[None]
        numpy.testing.assert_allclose(x[0], outputs[f'x/{i}'], rtol=0, atol=1e-3)
        with config.using_config('train', False), config.no_backprop_mode():
            seg, locs, cls, rois, _ = model.forward(x, [x.shape[3] / img.shape[2]])
        assert len(rois) == len(outputs[f'rois/{i}']) == 2 * N_ROI, f'image {i}: RoI counts'
        # boxes within 1e-3 of the input's side (docs/conventions.md)
        numpy.testing.assert_allclose(rois, outputs[f'rois/{i}'][:, [1, 0, 3, 2]], rtol=0,
                                      atol=1e-3 * max(x.shape[2:]),
                                      err_msg=f'image {i}: RoIs of both passes')
        # 5e-4 of the range for a network of 100+ layers (docs/conventions.md)
        tools.assert_features_close(seg.array, outputs[f'seg/{i}'], rtol=5e-4,
                                    name=f'image {i}: seg')
        tools.assert_features_close(locs.array[..., [1, 0, 3, 2]], outputs[f'locs/{i}'],
                                    rtol=5e-4, name=f'image {i}: offsets (y-first)')
        tools.assert_features_close(cls.array, outputs[f'cls/{i}'], rtol=5e-4,
                                    name=f'image {i}: cls')
        assert len(numpy.unique(outputs[f'cls/{i}'], axis=0)) == len(rois), \
            f'image {i}: RoIs with equal scores (the NMS order of ties is NumPy\'s choice)'


def test_outputs_equal_chainercv(chainercv_reference, tmp_path, monkeypatch):
    rng = numpy.random.RandomState(3)
    imgs = {'img0': rng.uniform(0, 255, (3, 120, 160)).astype(numpy.float32),
            'img1': rng.uniform(0, 255, (3, 150, 110)).astype(numpy.float32)}
    entry = fcis_resnet101.FCISResNet101.weights['sbd']
    outputs = tools.run(chainercv_reference, SCRIPT, tmp_path,
                        {'SEED': 2, 'FILE_NAME': entry.url.rsplit('/', 1)[1], 'N_ROI': N_ROI,
                         **SIZES}, **imgs)
    params = dict(fcis_resnet101.KEY_SETTINGS['sbd']['proposal_creator_params'],
                  n_test_post_nms=N_ROI)
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror',
                                   fcis_resnet101.FCISResNet101, 'sbd',
                                   min_size=SIZES['MIN_SIZE'], max_size=SIZES['MAX_SIZE'],
                                   proposal_creator_params=params)
    imgs = [imgs['img0'], imgs['img1']]
    _compare_network_outputs(model, imgs, outputs)
    model.use_preset('evaluate')
    for i, img in enumerate(imgs):
        # ChainerCV's post-processing on its own network outputs: RoIs that differ by
        # float32 rounding (1e-2 pixels through ResNet-101) can move an IoU across a
        # threshold and change which RoIs vote
        x = outputs[f'x/{i}']
        rois = outputs[f'rois/{i}'][:, [1, 0, 3, 2]]
        prob, bbox, label, score = model.decode(outputs[f'seg/{i}'], outputs[f'cls/{i}'], rois,
                                                img.shape[1:], x.shape[2] / img.shape[2])
        masks = model.paste_masks(prob, bbox, img.shape[1:])
        order = numpy.argsort(-outputs[f'scores/{i}'], kind='stable')
        assert len(score) > 10, f'image {i}: instances to compare'
        numpy.testing.assert_allclose(score, outputs[f'scores/{i}'][order], rtol=1e-6,
                                      err_msg=f'image {i}: scores')
        numpy.testing.assert_array_equal(label, outputs[f'labels/{i}'][order],
                                         err_msg=f'image {i}: labels')
        # NOTE: float32 sums in another order may put a pixel on the other side of a
        # threshold; a wrong rule moves far more
        differ = (masks != outputs[f'masks/{i}'][order]).sum(axis=(1, 2))
        assert differ.max() <= 2, f'image {i}: pixels that differ per mask: {differ}'
    model.use_preset('visualize')
    assert model.predict(imgs)[0][0].dtype == bool
