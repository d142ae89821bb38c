"""KeypointDetector's predict(): batches, settings inside the hook, host arrays of the
contract's dtypes, predict_with_bboxes, presets, errors."""

import numpy
import pytest

import cvzoo.core.links as L
from cvzoo.core import backend, config
from cvzoo.models.keypoint_detection import keypoint_detector
from cvzoo.testing import assert_is_keypoint_detection_model


class _Toy(L.Chain, keypoint_detector.KeypointDetector):
    """One instance per image at its top-left quarter, with two points; records each
    batch it sees and the settings inside the hook."""

    def __init__(self):
        super().__init__()
        self.batches, self.settings = [], []

    def prepare(self, img):
        return img[:, :4, :4]  # a network input of one size

    def detect_points(self, x, sizes, prepared):
        xp = self.xp
        self.batches.append(len(x))
        self.settings.append((config.config.train, config.config.enable_backprop,
                              backend.get_device_from_array(x)))
        bboxes = [xp.asarray([[0, 0, W / 2, H / 2]], numpy.float64) for H, W in sizes]
        points = [xp.asarray([[[1, 2], [W / 4, H / 4]]], numpy.float64) for H, W in sizes]
        point_scores = [xp.asarray([[0.5, -1.0]], numpy.float64) for _ in sizes]
        labels = [xp.asarray([1], numpy.int64) for _ in sizes]
        scores = [xp.asarray([0.9], numpy.float64) for _ in sizes]
        return bboxes, points, point_scores, labels, scores


def _images():
    return [numpy.zeros((3, 8, 12), numpy.float32), numpy.zeros((10, 6, 3), numpy.uint8),
            numpy.zeros((3, 4, 4), numpy.float32)]


def test_predict_keeps_the_contract_in_batches(device):
    model = _Toy().to_device(device)
    assert_is_keypoint_detection_model(model, _images(), 2, n_point=2)
    model.batches.clear()
    points, point_scores, labels, scores = model.predict(_images(), batchsize=2)
    assert model.batches == [2, 1]
    assert all(setting[:2] == (False, False) for setting in model.settings)
    assert model.settings[-1][2] == backend.get_device(device)
    numpy.testing.assert_array_equal(points[1], [[[1, 2], [1.5, 2.5]]])
    assert points[1].dtype == point_scores[1].dtype == scores[1].dtype == numpy.float32
    assert labels[1].dtype == numpy.int32


def test_predict_with_bboxes_adds_the_boxes():
    bboxes, points, *_ = _Toy().predict_with_bboxes(_images())
    assert len(bboxes) == len(points) == 3
    numpy.testing.assert_array_equal(bboxes[0], [[0, 0, 6, 4]])
    assert bboxes[0].dtype == numpy.float32 and isinstance(bboxes[0], numpy.ndarray)


def test_presets_and_errors():
    model = _Toy()
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.05, 0.5)
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')
    with pytest.raises(ValueError, match='batchsize'):
        model.predict(_images(), batchsize=0)
    with pytest.raises(NotImplementedError, match='detect_points'):
        keypoint_detector.KeypointDetector.detect_points(model, None, None, None)
