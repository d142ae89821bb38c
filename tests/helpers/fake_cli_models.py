"""Fake models the command line tests register as model 'x' with the weights key 'k'
(tests/cli, tests/faults), and the image they predict on."""

import typing

import numpy
from PIL import Image

from cvzoo.cli import commands
from cvzoo.core import backend
from cvzoo.models.keypoint_detection import keypoint_detector


class FakeClassifier:
    """Scores every image (0.2, 0.7, 0.1) over cat, dog, bird."""

    label_names = ('cat', 'dog', 'bird')

    def predict(self, imgs):
        return numpy.array([[0.2, 0.7, 0.1]] * len(imgs), dtype=numpy.float32)

    def to_device(self, device):
        return self


class FakeDetector:
    """Finds one dog at (1, 2, 10, 12), score 0.9, in every image."""

    label_names = ('cat', 'dog')
    score_thresh = 0.5
    nms_thresh = 0.45

    def use_preset(self, preset):
        self.preset = preset

    def predict(self, imgs):
        bbox = numpy.array([[1, 2, 10, 12]], numpy.float32)
        return [bbox], [numpy.array([1], numpy.int32)], [numpy.array([0.9], numpy.float32)]

    def to_device(self, device):
        return self


class FakePersonKeypointDetector(keypoint_detector.KeypointDetector):
    """Finds one person at (2, 3, 14, 13), score 0.8, with three keypoints in every image:
    (4, 5) and (12, 6) scoring 2.5 and 1.0, and (8, 11) scoring -0.5 (not shown); the
    keypoints are named as COCO's first three unless ``point_names`` is set."""

    label_names = ('cat', 'person')
    point_names = ('nose', 'left_eye', 'right_eye')
    device = backend.CPU

    def prepare(self, img):
        return img

    def detect_points(self, x, sizes, prepared):
        self.thresholds = (self.score_thresh, self.nms_thresh)
        bbox = numpy.array([[2, 3, 14, 13]], numpy.float32)
        point = numpy.array([[[4, 5], [12, 6], [8, 11]]], numpy.float32)
        point_score = numpy.array([[2.5, 1.0, -0.5]], numpy.float32)
        return [bbox] * len(x), [point] * len(x), [point_score] * len(x), \
            [numpy.array([1], numpy.int32)] * len(x), [numpy.array([0.8], numpy.float32)] * len(x)

    def to_device(self, device):
        return self


class FakeClass:
    """What the registry holds for the fake model 'x': a class with the weights key 'k'."""

    weights: typing.ClassVar[dict] = {'k': None}


def register(monkeypatch, model, task):
    """Make the command line see one model 'x' of ``task`` whose key 'k' builds ``model``."""
    monkeypatch.setattr(commands.zoo_api, 'list_models', lambda task=None: ['x'])
    monkeypatch.setattr(commands.zoo_api, 'get_model_class', lambda name: FakeClass)
    monkeypatch.setattr(commands.zoo_api, 'get_model', lambda name, pretrained_model: model)
    monkeypatch.setattr(commands.zoo_api, 'model_info', lambda name: {'task': task})


def write_image(folder):
    """Write ``folder/img.png``, a black 16 x 20 image, and return its path as a str."""
    path = folder / 'img.png'
    Image.fromarray(numpy.zeros((16, 20, 3), numpy.uint8)).save(path)
    return str(path)
