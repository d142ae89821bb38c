"""RetinaNetResNet50FPN: predict() contract, presets, heads, preprocessing, weights."""


import numpy
import pytest

from cvzoo.core import config
from cvzoo.datasets.coco.coco_label_names import coco_label_to_category_id
from cvzoo.models import zoo
from cvzoo.models.detection import torchvision_fpn_names, torchvision_transform
from cvzoo.models.detection.retinanet import retinanet
from cvzoo.testing import assert_is_detection_model

MIN_SIZE, MAX_SIZE = 64, 96


@pytest.fixture(scope='module')
def model():
    """One small-input model with 3 classes, shared by the module's tests."""
    return retinanet.RetinaNetResNet50FPN(n_fg_class=3, min_size=MIN_SIZE, max_size=MAX_SIZE)


def _imgs(rng, sizes):
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in sizes]


@pytest.mark.parametrize('sizes', [[(50, 70)], [(50, 70), (40, 33), (64, 64)]],
                         ids=['batch_1', 'batch_3'])
def test_predict_contract(model, rng, sizes):
    model.use_preset('evaluate')
    assert_is_detection_model(model, _imgs(rng, sizes), 3)


def test_predict_boxes_lie_in_each_input_and_scores_decrease(model, rng):
    model.score_thresh = 0.0
    try:
        bboxes, _, scores = model.predict(_imgs(rng, [(50, 70), (40, 33)]), batchsize=2)
    finally:
        model.use_preset('visualize')
    for bbox, score, (H, W) in zip(bboxes, scores, [(50, 70), (40, 33)]):
        assert 0 < len(bbox) <= model.max_detections
        assert (bbox >= 0).all() and (bbox[:, [0, 2]] <= W).all() and (bbox[:, [1, 3]] <= H).all()
        assert (numpy.diff(score) <= 0).all()


def test_presets_and_the_empty_result(model, rng):
    model.use_preset('visualize')
    assert (model.score_thresh, model.nms_thresh) == (0.5, 0.5)
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.05, 0.5)
    model.score_thresh = 1.0
    try:
        bboxes, labels, scores = model.predict(_imgs(rng, [(40, 40)]))
    finally:
        model.use_preset('visualize')
    assert bboxes[0].shape == (0, 4) and labels[0].shape == (0,) and scores[0].shape == (0,)
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')


def test_forward_shapes_and_prior_probability(model, rng):
    x = rng.standard_normal((2, 3, 64, 96)).astype(numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        locs, confs, anchors = model(x)
    grids = [(8, 12), (4, 6), (2, 3), (1, 2), (1, 1)]
    for loc, conf, anchor, (H, W) in zip(locs, confs, anchors, grids):
        assert loc.shape == (2, H * W * 9, 4) and conf.shape == (2, H * W * 9, 3)
        assert anchor.shape == (H * W * 9, 4) and anchor.dtype == numpy.float32
        assert conf.dtype == numpy.float32
    # N(0, 0.01) kernels on a 4-conv tower: the logits scatter around the prior's log odds
    assert abs(float(confs[0].array.mean()) - numpy.log(0.01 / 0.99)) < 0.3


def test_n_fg_class_and_reset_head():
    model = retinanet.RetinaNetResNet50FPN(n_fg_class=5)
    assert model.n_fg_class == 5 and model.head.conf.W.shape == (45, 256, 3, 3)
    model.reset_head(2)
    assert model.n_fg_class == 2 and model.head.conf.b.shape == (18,)
    numpy.testing.assert_allclose(model.head.conf.b.array, -numpy.log(99), rtol=1e-6)
    with pytest.raises(ValueError, match='n_fg_class'):
        model.reset_head(0)


BAD = {'n_fg_class': ({'n_fg_class': 0}, 'n_fg_class'),
       'trainable': ({'trainable_backbone_layers': 6}, 'trainable_backbone_layers'),
       'key': ({'pretrained_model': 'voc'}, 'pretrained_model')}


@pytest.mark.parametrize('kwargs, message', list(BAD.values()), ids=list(BAD))
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        retinanet.RetinaNetResNet50FPN(**kwargs)


def test_frozen_parts(model):
    base = model.extractor.base
    assert not any(p.requires_grad for p in base.conv1.params())
    assert not any(p.requires_grad for p in base.res2.params())
    assert all(p.requires_grad for p in base.res3.a.conv1.conv.params())
    assert not any(p.requires_grad for p in base.res5.a.conv1.bn.params())
    assert all(p.requires_grad for p in model.head.params())


# image_sizes of torchvision 0.28's GeneralizedRCNNTransform(800, 1333) in eager mode
# (test_torchvision_reference.py checks the rule against it on many more sizes)
TORCH_SIZES = {(375, 500): (800, 1066), (333, 500): (800, 1201), (480, 640): (800, 1066),
               (427, 640): (800, 1199), (612, 612): (800, 800), (281, 500): (749, 1333)}


@pytest.mark.parametrize('size', list(TORCH_SIZES), ids=[f'{h}x{w}' for h, w in TORCH_SIZES])
def test_resized_size_is_torchvisions(size):
    assert torchvision_transform.resized_size(size, 800, 1333) == TORCH_SIZES[size]


def test_prepare_normalises_then_resizes():
    img = numpy.full((3, 10, 20), 255.0, numpy.float32)
    img[1] = 0
    x = torchvision_transform.prepare_image(img, 20, 100)
    assert x.shape == (3, 20, 40) and x.dtype == numpy.float32
    numpy.testing.assert_allclose(x[:, 0, 0], [(1 - 0.485) / 0.229, -0.456 / 0.224,
                                               (1 - 0.406) / 0.225], rtol=1e-6)
    batch = torchvision_transform.pad_batch([x, x[:, :5, :33]])
    assert batch.shape == (2, 3, 32, 64) and (batch[1, :, 5:] == 0).all()


def test_entry_schema():
    entry = retinanet.RetinaNetResNet50FPN.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert entry.n_class == 80 and entry.sha256 == 'eeacb38b'
    assert entry.url.endswith('retinanet_resnet50_fpn_coco-eeacb38b.pth')
    assert entry.reported.value == pytest.approx(0.364)
    assert 'retinanet_resnet50_fpn' in zoo.list_models('detection')


def test_coco_rows_keep_the_80_categories_in_label_order():
    n_anchor = 2
    array = numpy.arange(n_anchor * 91, dtype=numpy.float32)
    rows = torchvision_fpn_names.coco_rows(array, n_anchor)
    ids = numpy.asarray(coco_label_to_category_id, numpy.float32)
    numpy.testing.assert_array_equal(rows, numpy.concatenate([ids, ids + 91]))
