"""FasterRCNNResNet50FPN (torchvision's Faster R-CNN FPN): predict() contract, presets,
heads, level mapping, preprocessing sizes, frozen parts, zoo entry."""

import math

import numpy
import pytest

from cvzoo.core import config
from cvzoo.core.variable import Variable
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding, torchvision_transform
from cvzoo.models.detection.faster_rcnn import torchvision_fpn
from cvzoo.testing import assert_is_detection_model

MIN_SIZE, MAX_SIZE = 128, 192


@pytest.fixture(scope='module')
def model():
    """One small-input model with 3 classes, shared by the module's tests. Its RPN keeps
    50 proposals per image (torchvision's 1000 cost seconds of RoIAlign per image). Its
    weights are seeded: a test counts its detections, which depend on them."""
    numpy.random.seed(0)
    model = torchvision_fpn.FasterRCNNResNet50FPN(n_fg_class=3, min_size=MIN_SIZE,
                                                  max_size=MAX_SIZE)
    model.rpn.n_test_post_nms = 50
    return model


def _imgs(rng, sizes):
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in sizes]


@pytest.mark.parametrize('sizes', [[(100, 150)], [(100, 150), (90, 70), (64, 64)]],
                         ids=['batch_1', 'batch_3'])
def test_predict_contract(model, rng, sizes):
    model.use_preset('evaluate')
    assert_is_detection_model(model, _imgs(rng, sizes), 3)


def test_boxes_lie_in_each_input_scores_decrease_and_at_most_100(model, rng):
    model.score_thresh, model.nms_thresh = 0.0, 1.0
    try:
        bboxes, labels, scores = model.predict(_imgs(rng, [(100, 150), (90, 70)]))
    finally:
        model.use_preset('visualize')
    for bbox, label, score, (H, W) in zip(bboxes, labels, scores, [(100, 150), (90, 70)]):
        # 50 RoIs x 3 classes, (almost) no NMS: the top-100 cut is reached
        assert len(bbox) == model.max_detections == 100
        assert (bbox >= 0).all() and (bbox[:, [0, 2]] <= W).all() and (bbox[:, [1, 3]] <= H).all()
        assert (bbox[:, 2:] - bbox[:, :2] >= 0.01 * min(H / MIN_SIZE, W / MAX_SIZE)).all()
        assert (numpy.diff(score) <= 0).all() and set(label) <= {0, 1, 2}


def test_presets_and_the_empty_result(model, rng):
    model.use_preset('visualize')
    assert (model.score_thresh, model.nms_thresh) == (0.7, 0.5)
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.05, 0.5)
    model.score_thresh = 1.0
    try:
        bboxes, labels, scores = model.predict(_imgs(rng, [(40, 40)]))
    finally:
        model.use_preset('visualize')
    assert bboxes[0].shape == (0, 4) and labels[0].shape == (0,) and scores[0].shape == (0,)
    assert bboxes[0].dtype == numpy.float32 and labels[0].dtype == numpy.int32
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')


def test_forward_shapes(model, rng):
    x = rng.standard_normal((2, 3, 128, 192)).astype(numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        hs = model.features(x)
        locs, confs, rois, roi_indices = model(x, [(128, 192), (100, 150)])
    assert [h.shape for h in hs] == [(2, 256, 128 // s, 192 // s) for s in (4, 8, 16, 32)] + \
        [(2, 256, 2, 3)]
    assert locs.shape == (len(rois), 16) and confs.shape == (len(rois), 4)
    assert 0 < (roi_indices == 0).sum() <= 50 and 0 < (roi_indices == 1).sum() <= 50
    assert (numpy.diff(roi_indices) >= 0).all()
    second = rois[roi_indices == 1]
    assert (second[:, [0, 2]] <= 150).all() and (second[:, [1, 3]] <= 100).all()


def test_n_fg_class_and_reset_head(model, rng):
    assert model.n_fg_class == 3 and model.head.conf.W.shape == (4, 1024)
    assert model.head.loc.W.shape == (16, 1024)
    fc1 = model.head.fc1.W.array.copy()
    model.reset_head(5)
    try:
        assert model.n_fg_class == 5 and model.head.conf.b.shape == (6,)
        assert model.head.loc.b.shape == (24,)
        numpy.testing.assert_array_equal(model.head.fc1.W.array, fc1)
        model.use_preset('evaluate')
        assert_is_detection_model(model, _imgs(rng, [(70, 90)]), 5)
        with pytest.raises(ValueError, match='n_fg_class'):
            model.reset_head(0)
    finally:
        model.reset_head(3)
        model.use_preset('visualize')


def test_unused_classes_enter_the_softmax_but_are_never_returned(model, rng):
    model.head.reset_classes(3 + 1 + 2)  # background, 3 labels, 2 unused classes
    model.n_unused_class = 2
    try:
        assert model.n_fg_class == 3
        locs = rng.standard_normal((5, 6 * 4)).astype(numpy.float32) * 0.1
        confs = rng.standard_normal((5, 6)).astype(numpy.float32) * 3
        rois = numpy.array([[10, 20, 40, 60]] * 5, numpy.float32)
        bbox, score, _ = model.decode(
            (Variable(locs), Variable(confs), rois, numpy.zeros(5, numpy.int32)), [(64, 96)])
        probs = numpy.exp(confs) / numpy.exp(confs).sum(axis=1, keepdims=True)
        numpy.testing.assert_allclose(score, probs[:, 1:4], rtol=1e-5)
        assert bbox.shape == (5, 3, 4)
        expected = box_coding.decode(rois[:, None], locs.reshape(5, 6, 4)[:, 1:4],
                                     torchvision_fpn.BOX_CODER_WEIGHTS,
                                     exp_clip=box_coding.EXP_CLIP)
        numpy.testing.assert_allclose(bbox, numpy.clip(expected, 0, [96, 64, 96, 64]),
                                      rtol=1e-5)
    finally:
        model.reset_head(3)
    assert (model.n_fg_class, model.n_unused_class) == (3, 0)


BAD = {'n_fg_class': ({'n_fg_class': 0}, 'n_fg_class'),
       'trainable': ({'trainable_backbone_layers': 6}, 'trainable_backbone_layers'),
       'key': ({'pretrained_model': 'voc'}, 'pretrained_model')}


@pytest.mark.parametrize('kwargs, message', list(BAD.values()), ids=list(BAD))
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        torchvision_fpn.FasterRCNNResNet50FPN(**kwargs)


def test_unknown_source_is_refused(model):
    with pytest.raises(ValueError, match='source'):
        model.convert_weights({}, 'chainercv')


def test_frozen_parts(model):
    base = model.extractor.base
    assert not any(p.requires_grad for p in base.conv1.params())
    assert not any(p.requires_grad for p in base.res2.params())
    assert all(p.requires_grad for p in base.res3.a.conv1.conv.params())
    assert not any(p.requires_grad for p in base.res5.a.conv1.bn.params())
    assert all(p.requires_grad for p in model.rpn.params())
    assert all(p.requires_grad for p in model.head.params())


def _level_by_hand(side):
    """torchvision's LevelMapper for a square RoI of this side, in float64 by hand."""
    return min(max(math.floor(4 + math.log2(side / 224) + 1e-6), 2), 5) - 2


@pytest.mark.parametrize('side', [1, 16, 111.9, 112, 223.9, 224, 447.9, 448, 900, 5000])
def test_rois_go_to_torchvisions_level(model, side):
    roi = numpy.array([[10, 20, 10 + side, 20 + side]], numpy.float32)
    assert int(model.head.distribute(roi)[0]) == _level_by_hand(side)


def test_bn_eps_follows_the_weights(model):
    bn = model.extractor.base.res3.a.conv1.bn
    assert bn.eps == 1e-5
    assert torchvision_fpn.PRETRAINED_BN_EPS > 0
    assert numpy.float32(1e-30) + numpy.float32(torchvision_fpn.PRETRAINED_BN_EPS) == \
        numpy.float32(1e-30)


# torchvision 0.28's GeneralizedRCNNTransform sizes (recorded from a run of it here); the
# rule is RetinaNet's, which this model shares
TORCH_SIZES = {(375, 500, 800, 1333): (800, 1066), (333, 500, 800, 1333): (800, 1201),
               (427, 640, 800, 1333): (800, 1199), (281, 500, 800, 1333): (749, 1333),
               (612, 612, 800, 1333): (800, 800), (100, 150, 128, 192): (128, 192),
               (50, 70, 128, 192): (128, 179), (90, 70, 128, 192): (164, 128)}


@pytest.mark.parametrize('case', list(TORCH_SIZES), ids=[str(c) for c in TORCH_SIZES])
def test_resized_size_is_torchvisions(case):
    H, W, min_size, max_size = case
    assert torchvision_transform.resized_size((H, W), min_size, max_size) == TORCH_SIZES[case]


def test_prepare_normalises_then_resizes(model):
    img = numpy.full((3, 50, 70), 255.0, numpy.float32)
    img[1] = 0
    x = model.prepare(img)
    # 128 rows, as torchvision's float64 factor gives (a float32 one gives 127)
    assert x.shape == (3, 128, 179) and x.dtype == numpy.float32
    numpy.testing.assert_allclose(x[:, 5, 7], [(1 - 0.485) / 0.229, -0.456 / 0.224,
                                               (1 - 0.406) / 0.225], rtol=1e-5)
    assert model.pad_batch([x, x[:, :70, :33]]).shape == (2, 3, 128, 192)


def test_zoo_entry():
    entry = torchvision_fpn.FasterRCNNResNet50FPN.weights['coco']
    assert zoo.get_model_class('fasterrcnn_resnet50_fpn') is torchvision_fpn.FasterRCNNResNet50FPN
    assert entry.url.endswith('fasterrcnn_resnet50_fpn_coco-258fb6c6.pth')
    assert entry.url.split('-')[-1].startswith(entry.sha256)
    assert entry.n_class == len(entry.label_names) == 80
    assert entry.reported.value == 0.370 and entry.reported.dataset == 'coco_val2017'
    assert entry.convert_from == 'torchvision'
