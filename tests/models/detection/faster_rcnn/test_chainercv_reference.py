"""Faster R-CNN with ChainerCV's weights gives ChainerCV's detections (ChainerCV 0.13.1).

ChainerCV builds the model for the entry's classes with seeded random weights, saves it
with ``chainer.serializers.save_npz`` under the entry's file name (the format of its
published files) and predicts two images with both presets; cvzoo loads the file through
its entry from a weights mirror, as a download, and predicts the same images. The
prepared inputs, the RoIs and the head's raw outputs are compared too, so that a
mismatch can be located.

Both run with a smaller resize (``min_size``/``max_size``, which both constructors
take) to stay affordable; ChainerCV's random VGG16 (Normal(0.01)) kills every
activation, so its ``vgg_initialW`` is He's (scaled 0.8) instead; the FPN ResNets' batch
norms are calibrated (tests/helpers/chainercv_reference_prelude.py) and both RPNs keep 50
RoIs per level and image instead of 1000. One ChainerCV forward pass of VGG16 takes
10-20 s here, so these tests are slow.

Ties: ChainerCV's VGG16 model suppresses with a reversed NumPy argsort of the scores, so
among equal scores the later RoI wins (cvzoo's ``later_candidate_wins_ties``) as long as a
class has at most 16 candidates; beyond that NumPy's introsort leaves the order of ties
undefined. Nearby RoIs that max-pool the same feature bins score exactly alike, so the
model here keeps 40 RoIs per image and few candidates per class.
"""


import numpy
import pytest

from cvzoo.core import config
from cvzoo.models.detection import box_coding
from cvzoo.models.detection.faster_rcnn import faster_rcnn_vgg
from cvzoo.models.detection.faster_rcnn.fpn import faster_rcnn_fpn_resnet as fpn_resnet
from tests.helpers import chainercv_reference_tools as tools


pytestmark = [pytest.mark.reference, pytest.mark.slow]

# Records the network's outputs of the first predict() call, image by image.
RECORD_FORWARD = '''
forward = model.forward
calls = []
def recording_forward(x, scales=None):
    roi_cls_locs, roi_scores, rois, roi_indices = forward(x, scales=scales)
    i = len(calls)
    calls.append(i)
    if i < len(imgs):
        OUTPUTS[f'x/{i}'] = x.array[0]
        OUTPUTS[f'rois/{i}'] = rois
        OUTPUTS[f'roi_scores/{i}'] = roi_scores.array
        OUTPUTS[f'roi_cls_locs/{i}'] = roi_cls_locs.array
    return roi_cls_locs, roi_scores, rois, roi_indices
model.forward = recording_forward
'''

VGG16_SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(SEED)
model = chainercv.links.FasterRCNNVGG16(
    n_fg_class=20, min_size=MIN_SIZE, max_size=MAX_SIZE,
    vgg_initialW=chainer.initializers.HeNormal(scale=0.8),
    proposal_creator_params={'n_test_post_nms': N_ROI})
# RPN outputs of moderate size: saturated objectness (many exact 1.0) would make the
# proposals depend on how ties are sorted, which NumPy leaves unspecified.
x = model.prepare(INPUTS['img0'])[None]
with chainer.using_config('train', False), chainer.no_backprop_mode():
    rpn_locs, rpn_scores, _, _, _ = model.rpn(model.extractor(x), x.shape[2:])
scale_linear_output(model.rpn.loc, rpn_locs.array, std=0.2)
scale_linear_output(model.rpn.score, rpn_scores.array, std=2.0)
# Class logits centred over the RoIs (a random image gives every RoI about the same
# logits, so one class would take them all), std 3, background-leaning.
with chainer.using_config('train', False), chainer.no_backprop_mode():
    h = model.extractor(x)
    _, _, rois, roi_indices, _ = model.rpn(h, x.shape[2:])
    _, roi_scores = model.head(h, rois, roi_indices)
model.head.score.b.array[...] -= roi_scores.array.mean(axis=0)
scale_linear_output(model.head.score, roi_scores.array - roi_scores.array.mean(axis=0), 3.0)
model.head.score.b.array[0] += 6.0
imgs = [INPUTS['img0'], INPUTS['img1']]
'''
# Saved after predict(): the lazily initialised convolutions hold no weights before.
SAVE = '''
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
'''


def _forward(model, x, scales):
    """``model.forward(x, scales)`` in test mode: roi_cls_locs, roi_scores Variables, rois
    and roi_indices arrays."""
    with config.using_config('train', False), config.no_backprop_mode():
        return model.forward(x, scales)


def _compare_network_outputs(model, imgs, outputs):
    """Prepared images, RoIs and raw head outputs of each image against ChainerCV's."""
    for i, img in enumerate(imgs):
        x = model.prepare(img)[None]
        numpy.testing.assert_allclose(x[0], outputs[f'x/{i}'], rtol=0, atol=1e-3)
        scale = x.shape[3] / img.shape[2]
        roi_cls_locs, roi_scores, rois, _ = _forward(model, x, [scale])
        assert len(rois) == len(outputs[f'rois/{i}']) > 0, f'image {i}: RoI counts'
        numpy.testing.assert_allclose(rois, outputs[f'rois/{i}'][:, [1, 0, 3, 2]], rtol=0,
                                      atol=1e-2, err_msg=f'image {i}: RoIs')
        tools.assert_features_close(roi_scores.array, outputs[f'roi_scores/{i}'],
                                    name=f'image {i}: roi_scores')
        tools.assert_features_close(box_coding.swap_xy_channels(roi_cls_locs.array.T).T,
                                    outputs[f'roi_cls_locs/{i}'],
                                    name=f'image {i}: roi_cls_locs (y-first)')


def test_vgg16_detections_equal_chainercv(chainercv_reference, chainercv_detection, tmp_path,
                                          monkeypatch, rng):
    imgs = chainercv_detection.images(rng)
    entry = faster_rcnn_vgg.FasterRCNNVGG16.weights['voc07']
    sizes = {'MIN_SIZE': 160, 'MAX_SIZE': 240}
    n_roi = 40
    outputs = tools.run(
        chainercv_reference,
        VGG16_SCRIPT + RECORD_FORWARD + chainercv_detection.PREDICT_BOTH_PRESETS + SAVE,
        tmp_path,
        {'SEED': 0, 'FILE_NAME': entry.url.rsplit('/', 1)[1], 'N_ROI': n_roi, **sizes},
        **imgs)
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror',
                                   faster_rcnn_vgg.FasterRCNNVGG16, 'voc07',
                                   min_size=sizes['MIN_SIZE'], max_size=sizes['MAX_SIZE'],
                                   proposal_creator_params={'n_test_post_nms': n_roi})
    imgs = [imgs['img0'], imgs['img1']]
    _compare_network_outputs(model, imgs, outputs)
    for i in range(len(imgs)):  # ChainerCV's order of tied scores is defined up to 16
        logits = outputs[f'roi_scores/{i}']
        prob = numpy.exp(logits - logits.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        assert ((prob[:, 1:] > 0.05).sum(axis=0) <= 16).all()
    for preset in ('evaluate', 'visualize'):
        model.use_preset(preset)
        result = model.predict(imgs)
        assert all(len(score) > 0 for score in result[2]), preset
        assert model.box_convention == 'inclusive'  # ChainerCV's VOC weights
        chainercv_detection.assert_same_detections(outputs, preset, result,
                                                   box_convention=model.box_convention)


FPN_SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(SEED)
model = getattr(chainercv.links, MODEL)(n_fg_class=80, min_size=MIN_SIZE, max_size=MAX_SIZE)
model.rpn._test_nms_limit_pre = model.rpn._test_nms_limit_post = N_ROI
batch = random_batch((2, 3, MIN_SIZE, MIN_SIZE))
calibrate_batch_normalization(model, model.extractor, batch)  # forward() asserts test mode
imgs = [INPUTS['img0'], INPUTS['img1']]
# Class logits of std 6 on the RoIs of the test's own (padded) batch: its RoIs over the
# padding give logits far from those of a calibration batch, and ChainerCV's softmax
# (exp without subtracting the maximum) turns a logit past 88 into NaN, dropping the RoI.
with chainer.using_config('train', False), chainer.no_backprop_mode():
    hs, rois, roi_indices = model(model.prepare(imgs)[0])
    rois, roi_indices = model.bbox_head.distribute(rois, roi_indices)
    _, confs = model.bbox_head(hs, rois, roi_indices)
scale_linear_output(model.bbox_head.conf, confs.array, std=6.0)
model.bbox_head.conf.b.array[0] += 3.0  # background-leaning: not every RoI passes 0.7
record_fpn_outputs(model, OUTPUTS)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
'''

# RoIs kept per level and per image (1000 for both by default): ChainerCV's RoI align
# runs a Python loop per RoI and bin on the CPU.
N_FPN_ROI = 50
FPN_CASES = [pytest.param(fpn_resnet.FasterRCNNFPNResNet50, 'FasterRCNNFPNResNet50',
                          id='FPNResNet50'),
             # NOTE: its head, decoding and suppression match on ChainerCV's RoIs, but
             # its RPN's RoIs differ from ChainerCV's by up to ~7e-3 input pixels (float32
             # rounding through ResNet-101), which moves some end-to-end scores by more
             # than 1e-4 (10 of 138 in image 0, 'evaluate').
             pytest.param(fpn_resnet.FasterRCNNFPNResNet101, 'FasterRCNNFPNResNet101',
                          id='FPNResNet101', marks=pytest.mark.xfail(
                              strict=True, reason='end-to-end scores: RoI rounding'))]


@pytest.mark.parametrize('model_class, name', FPN_CASES)
def test_fpn_detections_equal_chainercv(chainercv_reference, chainercv_detection, tmp_path,
                                        monkeypatch, rng, model_class, name):
    imgs = chainercv_detection.images(rng)
    sizes = {'MIN_SIZE': 128, 'MAX_SIZE': 192, 'N_ROI': N_FPN_ROI}
    outputs = tools.run(
        chainercv_reference, FPN_SCRIPT + chainercv_detection.PREDICT_BOTH_PRESETS,
        tmp_path, {'SEED': 0, 'MODEL': name, 'FILE_NAME': model_class.weights['coco'].url
                   .rsplit('/', 1)[1], **sizes}, **imgs)
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, 'coco',
                                   min_size=sizes['MIN_SIZE'], max_size=sizes['MAX_SIZE'])
    model.rpn.n_test_pre_nms = model.rpn.n_test_post_nms = N_FPN_ROI
    imgs = [imgs['img0'], imgs['img1']]
    prepared = [model.prepare(img) for img in imgs]
    x = model.pad_batch(prepared)
    numpy.testing.assert_allclose(x, outputs['x'], rtol=0, atol=1e-3)
    img_sizes = [img.shape[1:] for img in imgs]
    scales = model.input_scales(img_sizes, prepared)
    _, _, rois, roi_indices = _forward(model, x, scales)
    numpy.testing.assert_array_equal(roi_indices, outputs['roi_indices'])
    numpy.testing.assert_allclose(rois, outputs['rois'][:, [1, 0, 3, 2]], rtol=0, atol=1e-2,
                                  err_msg='RPN RoIs')
    # The head, decoding and suppression on ChainerCV's own RoIs (grouped by level there)
    # give its detections at the default tolerances.
    head_rois = outputs['head/rois'][:, [1, 0, 3, 2]]
    head_roi_indices = outputs['head/roi_indices']
    with config.using_config('train', False), config.no_backprop_mode():
        locs, confs = model.head(model.extractor(x), head_rois, head_roi_indices)
    assert numpy.abs(outputs['head/confs']).max() < 80, 'ChainerCV\'s softmax would overflow'
    tools.assert_features_close(confs.array, outputs['head/confs'], name='head confs')
    tools.assert_features_close(box_coding.swap_xy_channels(locs.array.T).T,
                                outputs['head/locs'].reshape(len(locs), -1),
                                name='head locs (y-first)')
    by_image = numpy.argsort(head_roi_indices, kind='stable')  # as decode() takes them
    head_outputs = (locs[by_image], confs[by_image], head_rois[by_image],
                    head_roi_indices[by_image])
    for preset in ('evaluate', 'visualize'):
        model.use_preset(preset)
        bbox, score = model.decode(head_outputs, img_sizes, scales)
        chainercv_detection.assert_same_detections(outputs, preset,
                                                   model.suppress(bbox, score, img_sizes))
    for preset in ('evaluate', 'visualize'):
        model.use_preset(preset)
        result = model.predict(imgs)
        assert all(len(score) > 0 for score in result[2]), preset
        chainercv_detection.assert_same_detections(outputs, preset, result)
