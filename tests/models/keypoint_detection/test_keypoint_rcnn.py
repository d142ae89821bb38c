"""KeypointRCNNResNet50FPN: predict() contract, points in their boxes, re-made heads,
arguments, weights entry and loading, devices."""

import numpy
import pytest

from cvzoo.core import backend, config, serializers
from cvzoo.datasets.coco.coco_keypoint_names import coco_keypoint_names
from cvzoo.models import list_models, zoo
from cvzoo.models.detection.faster_rcnn import torchvision_fpn
from cvzoo.models.keypoint_detection import heatmap_decoding, keypoint_rcnn
from cvzoo.testing import assert_is_keypoint_detection_model
from tests.helpers import torchvision_weights

# few instances: random weights detect up to the cap, and each one pools its keypoints
SMALL = {'min_size': 64, 'max_size': 96, 'max_detections': 6}


def _image(H, W, seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3, H, W)).astype(numpy.float32)


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)
    return keypoint_rcnn.KeypointRCNNResNet50FPN(n_fg_class=2, n_point=5, **SMALL)


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_predict_contract(model, preset):
    model.use_preset(preset)
    model.score_thresh = min(model.score_thresh, 0.3)  # random weights score about 1 / 3
    imgs = [_image(50, 70), _image(80, 40, 1)]
    assert_is_keypoint_detection_model(model, imgs, 2, n_point=5)
    points, _, labels, _ = model.predict(imgs)
    assert all(0 < len(label) <= model.max_detections for label in labels)
    assert all(len(numpy.unique(point.reshape(-1, 2), axis=0)) > 1 for point in points)


def test_points_are_decoded_in_the_resized_boxes_and_scaled_back(model):
    model.use_preset('evaluate')
    imgs = [_image(50, 70, 2), _image(60, 90, 3)]
    sizes = [img.shape[1:] for img in imgs]
    bboxes, points, point_scores, labels, scores = model.predict_with_bboxes(imgs)
    assert [len(bbox) for bbox in bboxes] == [len(label) for label in labels]
    for i, size in enumerate(sizes):
        assert (bboxes[i] <= numpy.array(size)[[1, 0, 1, 0]] + 1e-3).all()  # image pixels
        # NOTE: a box narrower than a pixel of the network's input is widened to one
        inside = (points[i] >= bboxes[i][:, None, :2] - 1e-3) & \
            (points[i] <= numpy.maximum(bboxes[i][:, None, 2:], bboxes[i][:, None, :2] + 2))
        assert inside.all()
    prepared = [model.prepare(img) for img in imgs]
    with config.using_config('train', False), config.no_backprop_mode():
        hs = model.features(model.pad_batch(prepared))
        ratio = [numpy.array(size) / numpy.array(p.shape[1:]) for size, p in
                 zip(sizes, prepared)]
        resized = [bbox / r[[1, 0, 1, 0]] for bbox, r in zip(bboxes, ratio)]
        heatmap = model.keypoint_head(hs, numpy.concatenate(resized).astype(numpy.float32),
                                      numpy.repeat([0, 1], [len(b) for b in bboxes]).astype(
                                          numpy.int32)).array
    assert heatmap.shape == (sum(map(len, bboxes)), 5, 56, 56)
    point, point_score = heatmap_decoding.heatmaps_to_points(
        heatmap, numpy.concatenate(resized).astype(numpy.float32))
    numpy.testing.assert_allclose(numpy.concatenate(point_scores), point_score, rtol=1e-4,
                                  atol=1e-4)
    scale = numpy.concatenate([numpy.repeat(r[None, ::-1], len(b), axis=0)
                               for r, b in zip(ratio, bboxes)])
    numpy.testing.assert_allclose(numpy.concatenate(points), point * scale[:, None], atol=0.05)


def test_n_point_n_fg_class_and_their_resets():
    numpy.random.seed(1)
    other = keypoint_rcnn.KeypointRCNNResNet50FPN(n_point=4, **SMALL)
    assert (other.n_fg_class, other.n_point) == (1, 4)  # a person detector by default
    assert other.keypoint_head.deconv.W.shape == (512, 4, 4, 4)
    other.reset_points(6)
    other.reset_head(3)
    assert (other.n_fg_class, other.n_point) == (3, 6) and other.head.conf.W.shape == (4, 1024)
    assert keypoint_rcnn.KeypointRCNNResNet50FPN(**SMALL).n_point == 17


@pytest.mark.parametrize('kwargs, message', [
    ({'n_point': 0}, 'n_point'), ({'n_point': 2.0}, 'n_point'),
    ({'max_detections': 0}, 'max_detections'), ({'n_fg_class': -1}, 'n_fg_class'),
], ids=['n_point 0', 'n_point float', 'max_detections', 'n_fg_class'])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        keypoint_rcnn.KeypointRCNNResNet50FPN(**kwargs)


def test_unknown_source_is_refused(model):
    with pytest.raises(ValueError, match='source'):
        model.convert_weights({}, 'darknet')


def test_weights_entry():
    entry = keypoint_rcnn.KeypointRCNNResNet50FPN.weights['coco']
    assert zoo.schema_problems(entry) == []
    assert entry.url.endswith('/keypointrcnn_resnet50_fpn_coco-fc266e95.pth')
    assert entry.sha256 == 'fc266e95' and entry.n_class == 1
    assert entry.label_names == ('person',)
    assert entry.reported.metric == 'keypoint_map_coco'
    assert entry.reported.value == pytest.approx(0.650) and '54.6' in entry.reported.source
    assert 'keypointrcnn_resnet50_fpn' in list_models('keypoint_detection')


def test_a_cvzoo_file_brings_its_class_and_point_counts(model, tmp_path):
    path = str(tmp_path / 'trained.npz')
    serializers.save_npz(path, model, compression=False)
    loaded = keypoint_rcnn.KeypointRCNNResNet50FPN(pretrained_model=path, source='cvzoo',
                                                   **SMALL)
    assert (loaded.n_fg_class, loaded.n_point) == (2, 5)
    numpy.testing.assert_array_equal(loaded.keypoint_head.deconv.W.array,
                                     model.keypoint_head.deconv.W.array)
    fine_tuned = keypoint_rcnn.KeypointRCNNResNet50FPN(
        n_fg_class=1, pretrained_model=path, source='cvzoo', n_point=3, **SMALL)
    assert (fine_tuned.n_fg_class, fine_tuned.n_point) == (1, 3)
    numpy.testing.assert_array_equal(fine_tuned.keypoint_head.conv8.conv.W.array,
                                     model.keypoint_head.conv8.conv.W.array)


@pytest.mark.reference
def test_the_coco_key_loads_a_torchvision_file(torchvision, tmp_path):
    import torch

    torch.manual_seed(0)
    net = torchvision.models.detection.keypointrcnn_resnet50_fpn(weights=None,
                                                                weights_backbone=None)
    loaded = torchvision_weights.save_and_load(
        torch, net, tmp_path / 'keypointrcnn_resnet50_fpn_coco-fc266e95.pth',
        keypoint_rcnn.KeypointRCNNResNet50FPN, 'coco', **SMALL)
    state = net.state_dict()
    assert loaded.label_names == ('person',) and loaded.point_names == coco_keypoint_names
    assert (loaded.n_fg_class, loaded.n_point, int(loaded.n_unused_class)) == (1, 17, 0)
    # torchvision's v1 COCO files: eps 0 (the smallest positive float32 here)
    assert loaded.extractor.base.conv1.bn.eps == torchvision_fpn.PRETRAINED_BN_EPS
    numpy.testing.assert_array_equal(loaded.keypoint_head.conv3.conv.W.array,
                                     state['roi_heads.keypoint_head.4.weight'].numpy())
    numpy.testing.assert_array_equal(
        loaded.keypoint_head.deconv.b.array,
        state['roi_heads.keypoint_predictor.kps_score_lowres.bias'].numpy())
    numpy.testing.assert_array_equal(loaded.head.conf.W.array,
                                     state['roi_heads.box_predictor.cls_score.weight'].numpy())


def test_predict_on_the_device(device):
    numpy.random.seed(0)
    model = keypoint_rcnn.KeypointRCNNResNet50FPN(n_point=3, **SMALL)
    model.score_thresh = 0.3
    imgs = [_image(50, 70)]
    expected = model.predict(imgs)
    model.to_device(device)
    points, point_scores, labels, scores = model.predict(imgs)
    assert isinstance(points[0], numpy.ndarray) and len(labels[0]) > 0
    numpy.testing.assert_allclose(points[0], expected[0][0], atol=1e-3)
    numpy.testing.assert_allclose(point_scores[0], expected[1][0], rtol=1e-4, atol=1e-4)
    numpy.testing.assert_array_equal(labels[0], expected[2][0])
    numpy.testing.assert_allclose(scores[0], expected[3][0], rtol=1e-4)
    assert all(param.device == backend.get_device(device) for param in model.params())
