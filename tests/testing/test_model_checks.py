"""The predict() contract checks pass a model that keeps the contract and fail, naming
what is wrong, on a stand-in model that breaks one promise at a time."""

import numpy
import pytest

from cvzoo.core import config
from cvzoo.testing import model_checks
from cvzoo.testing.model_checks import (assert_is_classification_model,
                                        assert_is_detection_model,
                                        assert_is_instance_segmentation_model,
                                        assert_is_keypoint_detection_model,
                                        assert_is_semantic_segmentation_model)

N_CLASS = 3
# a CHW float image 4 x 6 and an HWC uint8 image 5 x 3
IMGS = (numpy.zeros((3, 4, 6), numpy.float32), numpy.zeros((5, 3, 3), numpy.uint8))
SIZES = ((4, 6), (5, 3))


class _DeviceArray:
    """Stands in for a CuPy array: the array attributes, and no implicit host copy."""

    def __init__(self, array):
        self._array = array
        self.shape, self.ndim, self.dtype = array.shape, array.ndim, array.dtype

    def __len__(self):
        return len(self._array)

    def __array__(self, *args, **kwargs):
        raise TypeError('implicit conversion to a NumPy array is not allowed')


class _Model:
    """predict() returns what it was given; use_preset sets the thresholds given."""

    def __init__(self, result, presets=None, leave_train=None):
        self.result = result
        self.presets = presets or {'visualize': (0.7, 0.45), 'evaluate': (0.05, 0.45)}
        self.leave_train = leave_train

    def predict(self, imgs):
        list(imgs)
        if self.leave_train is not None:
            config.config.train = self.leave_train
        return self.result

    def use_preset(self, preset):
        self.score_thresh, self.nms_thresh = self.presets[preset]


@pytest.fixture(autouse=True)
def _restore_train():
    before = config.config.train
    yield
    config.config.train = before


# --- classification ---------------------------------------------------------------------

def _probs():
    return numpy.array([[0.2, 0.3, 0.5], [1, 0, 0]], numpy.float32)


def test_a_classifier_that_keeps_the_contract_passes():
    assert_is_classification_model(_Model(_probs()), IMGS, N_CLASS)
    assert_is_classification_model(_Model(_probs()), iter(IMGS), N_CLASS)


@pytest.mark.parametrize('probs, message', [
    (_probs().astype(numpy.float64), 'probs: expected float32, got float64'),
    (_DeviceArray(_probs()), 'probs: expected a NumPy array on the host'),
    (_probs()[:1], r'probs: expected shape \(2, 3\), got \(1, 3\)'),
    (numpy.full((2, 4), 0.25, numpy.float32), r'probs: expected shape \(2, 3\)'),
    (_probs()[0], 'probs: expected 2 axes'),
    (numpy.array([[0.2, 0.3, 0.6], [1, 0, 0]], numpy.float32), 'rows do not sum to 1'),
    (numpy.array([[-0.5, 0.5, 1], [1, 0, 0]], numpy.float32), r'outside \[0, 1\]'),
    (numpy.array([[numpy.nan, 0.5, 0.5], [1, 0, 0]], numpy.float32), 'not finite'),
])
def test_a_classifier_that_breaks_the_contract_fails(probs, message):
    with pytest.raises(AssertionError, match=message):
        assert_is_classification_model(_Model(probs), IMGS, N_CLASS)


def test_predict_must_restore_the_train_mode():
    with pytest.raises(AssertionError, match=r'predict: \(train, enable_backprop\) was'):
        assert_is_classification_model(_Model(_probs(), leave_train=False), IMGS, N_CLASS)


# --- detection --------------------------------------------------------------------------

def _detections():
    """Two boxes in the 4 x 6 image, one in the 5 x 3 one, scores decreasing."""
    bboxes = [numpy.array([[0, 0, 6, 4], [1, 1, 2, 3]], numpy.float32),
              numpy.array([[0.5, 1, 3, 5]], numpy.float32)]
    labels = [numpy.array([2, 0], numpy.int32), numpy.array([1], numpy.int32)]
    scores = [numpy.array([0.9, 0.9], numpy.float32), numpy.array([0.3], numpy.float32)]
    return bboxes, labels, scores


def _broken(part, image, value):
    result = _detections()
    result[part][image] = value
    return result


def test_a_detector_that_keeps_the_contract_passes():
    assert_is_detection_model(_Model(_detections()), IMGS, N_CLASS)
    empty = ([numpy.zeros((0, 4), numpy.float32)] * 2, [numpy.zeros(0, numpy.int32)] * 2,
             [numpy.zeros(0, numpy.float32)] * 2)
    assert_is_detection_model(_Model(empty), IMGS, N_CLASS)


BBOX, LABEL, SCORE = 0, 1, 2
BROKEN_DETECTORS = {
    'bbox float64': (_broken(BBOX, 0, numpy.zeros((2, 4))), r'bboxes\[0\]: expected float32'),
    'label int64': (_broken(LABEL, 1, numpy.array([1])), r'labels\[1\]: expected int32'),
    'score float16': (_broken(SCORE, 1, numpy.array([0.3], numpy.float16)),
                      r'scores\[1\]: expected float32'),
    'bbox on a device': (_broken(BBOX, 1, _DeviceArray(numpy.zeros((1, 4), numpy.float32))),
                         r'bboxes\[1\]: expected a NumPy array on the host'),
    'score on a device': (_broken(SCORE, 0, _DeviceArray(numpy.ones(2, numpy.float32))),
                          r'scores\[0\]: expected a NumPy array on the host'),
    'label = n_fg_class': (_broken(LABEL, 0, numpy.array([3, 0], numpy.int32)),
                           r'labels\[0\]: values outside \[0, 3\): \[3\]'),
    'label -1': (_broken(LABEL, 1, numpy.array([-1], numpy.int32)),
                 r'labels\[1\]: values outside \[0, 3\): \[-1\]'),
    'unsorted scores': (_broken(SCORE, 0, numpy.array([0.5, 0.6], numpy.float32)),
                        r'scores\[0\]: not in decreasing order'),
    'score above 1': (_broken(SCORE, 1, numpy.array([1.5], numpy.float32)),
                      r'scores\[1\]: outside \[0, 1\]'),
    'box past the width': (_broken(BBOX, 1, numpy.array([[0, 0, 3.5, 5]], numpy.float32)),
                           r'bboxes\[1\]: boxes outside the 3x5 image'),
    'box past the height': (_broken(BBOX, 0, numpy.array([[0, 0, 6, 4.1], [1, 1, 2, 3]],
                                                         numpy.float32)),
                            r'bboxes\[0\]: boxes outside the 6x4 image'),
    'negative box': (_broken(BBOX, 1, numpy.array([[-1, 0, 2, 2]], numpy.float32)),
                     'boxes outside'),
    'x_min > x_max': (_broken(BBOX, 1, numpy.array([[2, 0, 1, 2]], numpy.float32)),
                      r'bboxes\[1\]: x_min > x_max'),
    'y-first boxes': (_broken(BBOX, 1, numpy.array([[1, 0.5, 5, 3]], numpy.float32)),
                      'outside the 3x5 image'),
    'nan box': (_broken(BBOX, 1, numpy.array([[numpy.nan, 0, 2, 2]], numpy.float32)),
                r'bboxes\[1\]: values that are not finite'),
    'bbox (R, 5)': (_broken(BBOX, 1, numpy.zeros((1, 5), numpy.float32)),
                    r'expected \(R, 4\)'),
    'fewer labels than boxes': (_broken(LABEL, 0, numpy.array([1], numpy.int32)),
                                'image 0: 2 boxes or masks, 1 labels, 2 scores'),
    'one image missing': ((_detections()[0][:1],) + _detections()[1:],
                          r'bboxes: expected one entry per image \(2\), got 1'),
    'a tuple, not a list': ((tuple(_detections()[0]),) + _detections()[1:],
                            'bboxes: expected a list, got tuple'),
}


@pytest.mark.parametrize('case', sorted(BROKEN_DETECTORS))
def test_a_detector_that_breaks_the_contract_fails(case):
    result, message = BROKEN_DETECTORS[case]
    with pytest.raises(AssertionError, match=message):
        assert_is_detection_model(_Model(result), IMGS, N_CLASS)


def test_a_detector_preset_outside_0_1_fails():
    model = _Model(_detections(), presets={'visualize': (0.7, 0.45), 'evaluate': (-0.1, 0.45)})
    with pytest.raises(AssertionError, match=r"use_preset\('evaluate'\): score_thresh -0.1"):
        assert_is_detection_model(model, IMGS, N_CLASS)


# --- semantic segmentation --------------------------------------------------------------

def _label_maps():
    return [numpy.zeros(size, numpy.int32) for size in SIZES]


def _broken_map(image, value):
    labels = _label_maps()
    labels[image] = value
    return labels


def test_a_segmenter_that_keeps_the_contract_passes():
    labels = _label_maps()
    labels[0][1, 2] = N_CLASS - 1
    assert_is_semantic_segmentation_model(_Model(labels), IMGS, N_CLASS)


@pytest.mark.parametrize('labels, message', [
    (_broken_map(1, numpy.zeros((3, 5), numpy.int32)),
     r'labels\[1\]: expected the image size \(5, 3\), got \(3, 5\)'),
    (_broken_map(0, numpy.zeros((2, 3), numpy.int32)), r'labels\[0\]: expected the image size'),
    (_broken_map(0, numpy.zeros((4, 6), numpy.int64)), r'labels\[0\]: expected int32'),
    (_broken_map(0, numpy.full((4, 6), N_CLASS, numpy.int32)),
     r'labels\[0\]: values outside \[0, 3\): \[3\]'),
    (_broken_map(1, numpy.full((5, 3), -1, numpy.int32)), r'values outside \[0, 3\): \[-1\]'),
    (_broken_map(1, _DeviceArray(numpy.zeros((5, 3), numpy.int32))),
     r'labels\[1\]: expected a NumPy array on the host'),
    (_broken_map(0, numpy.zeros((1, 4, 6), numpy.int32)), r'labels\[0\]: expected 2 axes'),
    (_label_maps()[:1], r'labels: expected one entry per image \(2\), got 1'),
])
def test_a_segmenter_that_breaks_the_contract_fails(labels, message):
    with pytest.raises(AssertionError, match=message):
        assert_is_semantic_segmentation_model(_Model(labels), IMGS, N_CLASS)


# --- instance segmentation --------------------------------------------------------------

def _instances():
    masks = [numpy.zeros((2,) + SIZES[0], bool), numpy.zeros((1,) + SIZES[1], bool)]
    _, labels, scores = _detections()
    return masks, labels, scores


def _broken_instances(part, image, value):
    result = _instances()
    result[part][image] = value
    return result


def test_an_instance_segmenter_that_keeps_the_contract_passes():
    assert_is_instance_segmentation_model(_Model(_instances()), IMGS, N_CLASS)


@pytest.mark.parametrize('result, message', [
    (_broken_instances(0, 1, numpy.zeros((1, 3, 5), bool)),
     r'masks\[1\]: expected \(R,\) \+ the image size \(5, 3\), got \(1, 3, 5\)'),
    (_broken_instances(0, 0, numpy.zeros((2, 4, 6), numpy.uint8)), r'masks\[0\]: expected bool'),
    (_broken_instances(0, 0, _DeviceArray(numpy.zeros((2, 4, 6), bool))),
     r'masks\[0\]: expected a NumPy array on the host'),
    (_broken_instances(1, 1, numpy.array([5], numpy.int32)), r'labels\[1\]: values outside'),
    (_broken_instances(0, 0, numpy.zeros((3, 4, 6), bool)), 'image 0: 3 boxes or masks'),
])
def test_an_instance_segmenter_that_breaks_the_contract_fails(result, message):
    with pytest.raises(AssertionError, match=message):
        assert_is_instance_segmentation_model(_Model(result), IMGS, N_CLASS)


# --- keypoint detection -------------------------------------------------------------

def _keypoint_result():
    rng = numpy.random.RandomState(0)
    points = [rng.uniform(0, 4, (2, 3, 2)).astype(numpy.float32),
              numpy.zeros((0, 3, 2), numpy.float32)]
    point_scores = [rng.normal(0, 1, (2, 3)).astype(numpy.float32),
                    numpy.zeros((0, 3), numpy.float32)]
    labels = [numpy.array([0, 2], numpy.int32), numpy.zeros(0, numpy.int32)]
    scores = [numpy.array([0.9, 0.2], numpy.float32), numpy.zeros(0, numpy.float32)]
    return points, point_scores, labels, scores


def _broken_keypoints(part, i, value):
    result = _keypoint_result()
    result[part][i] = value
    return result


def test_a_keypoint_detector_that_keeps_the_contract_passes():
    assert_is_keypoint_detection_model(_Model(_keypoint_result()), IMGS, N_CLASS)
    assert_is_keypoint_detection_model(_Model(_keypoint_result()), IMGS, N_CLASS, n_point=3)


@pytest.mark.parametrize('result, n_point, message', [
    (_keypoint_result()[:3], None, 'not enough values'),
    (_broken_keypoints(0, 0, numpy.zeros((2, 3, 3), numpy.float32)), None,
     r'points\[0\]: expected \(R, 3, 2\)'),
    (_keypoint_result(), 4, r'points\[0\]: expected \(R, 4, 2\), got \(2, 3, 2\)'),
    (_broken_keypoints(0, 0, numpy.zeros((2, 3, 2), numpy.float64)), None,
     r'points\[0\]: expected float32'),
    (_broken_keypoints(1, 0, numpy.zeros((2, 4), numpy.float32)), None,
     r'point_scores\[0\]: expected \(2, 3\), got \(2, 4\)'),
    (_broken_keypoints(1, 0, numpy.full((2, 3), numpy.nan, numpy.float32)), None,
     'not finite'),
    (_broken_keypoints(0, 1, _DeviceArray(numpy.zeros((0, 3, 2), numpy.float32))), None,
     r'points\[1\]: expected a NumPy array on the host'),
    (_broken_keypoints(2, 0, numpy.array([0, 3], numpy.int32)), None,
     r'labels\[0\]: values outside'),
    (_broken_keypoints(3, 0, numpy.array([0.2, 0.9], numpy.float32)), None,
     'not in decreasing order'),
    (_broken_keypoints(2, 0, numpy.array([0], numpy.int32)), None,
     'image 0: 2 boxes or masks, 1 labels'),
], ids=['three lists', 'three coordinates', 'n_point', 'float64', 'score shape', 'nan',
        'device', 'label range', 'score order', 'label count'])
def test_a_keypoint_detector_that_breaks_the_contract_fails(result, n_point, message):
    with pytest.raises((AssertionError, ValueError), match=message):
        assert_is_keypoint_detection_model(_Model(result), IMGS, N_CLASS, n_point)


def test_every_check_is_listed_by_task():
    assert model_checks.ASSERTIONS == {
        'classification': assert_is_classification_model,
        'detection': assert_is_detection_model,
        'semantic_segmentation': assert_is_semantic_segmentation_model,
        'instance_segmentation': assert_is_instance_segmentation_model,
        'keypoint_detection': assert_is_keypoint_detection_model,
    }
