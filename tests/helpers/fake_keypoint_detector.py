"""A stand-in keypoint detector for the evaluator and script tests.

:class:`FakeKeypointDetector` keeps the DESIGN.md predict() contract of keypoint
detection without a network: each image is answered from a table chosen by the image's
mean value (tests write images of one flat grey level per image); an image it does not
know gets no detection.
"""

import typing

import numpy
import pytest

from cvzoo.models import registry, zoo
from tests.helpers.fake_instance_segmenter import FakeInstanceSegmenter, _as_chw, weights_entry

NAME = 'fake_keypoint_detector'


def random_people(rng, n, size, n_point=17, n_fg_class=1):
    """``points, visibles, labels, bboxes`` of ``n`` people inside an image of ``size``."""
    H, W = size
    corner = rng.uniform(0, 0.5, (n, 2)) * (W, H)
    extent = rng.uniform(0.2, 0.5, (n, 1, 2)) * (W, H)
    points = (corner[:, None] + rng.random((n, n_point, 2)) * extent).astype(numpy.float32)
    visibles = rng.random((n, n_point)) < 0.8
    labels = rng.integers(0, n_fg_class, n).astype(numpy.int32)
    bboxes = numpy.concatenate([corner, corner + extent[:, 0]], axis=1).astype(numpy.float32)
    return points, visibles, labels, bboxes


class FakeKeypointDetector(FakeInstanceSegmenter):
    """``points, point_scores, labels, scores = predict(imgs)`` from a table keyed by grey
    level; construction, weights keys and presets as :class:`FakeInstanceSegmenter`.

    Args:
        answers (dict or None): grey level (int) -> ``(points, labels, scores)``; the
            point scores are the points' x coordinates. An unknown image gets none.
        n_fg_class (int), label_names, pretrained_model: as the parent's.
    """

    def __init__(self, answers=None, n_fg_class=1, label_names=None, pretrained_model=None):
        super().__init__(answers, n_fg_class, label_names, pretrained_model=pretrained_model)

    def _answer(self, img):
        mean = float(img.mean())
        nearest = min(self.answers, key=lambda level: abs(level - mean), default=None)
        if nearest is not None and abs(nearest - mean) <= 3:
            points, labels, scores = self.answers[nearest]
        else:
            points, labels, scores = numpy.zeros((0, 17, 2)), numpy.zeros(0), numpy.zeros(0)
        return (numpy.asarray(points, numpy.float32), numpy.asarray(points)[..., 0]
                .astype(numpy.float32), numpy.asarray(labels, numpy.int32),
                numpy.asarray(scores, numpy.float32))

    def predict(self, imgs):
        """One ``(R, K, 2), (R, K), (R,) int32, (R,) float32`` answer per image."""
        self.calls += 1
        answers = [self._answer(_as_chw(img)) for img in imgs]
        return tuple([a[k] for a in answers] for k in range(4))


@pytest.fixture
def fake_keypoint_detector(monkeypatch):
    """Register :class:`FakeKeypointDetector` as 'fake_keypoint_detector' (task
    'keypoint_detection') in a registry that holds it alone; return the class. Weights
    key: 'coco' (person), reporting keypoint AP 0.65."""

    class Registered(FakeKeypointDetector):
        weights: typing.ClassVar[dict] = {
            'coco': weights_entry(('person',), 'keypoint_map_coco', 'coco_val2017', 0.65)}

    monkeypatch.setattr(registry, '_REGISTRY', {})
    monkeypatch.setattr('cvzoo.models.discovery.import_all_models', lambda: None)
    zoo.register(NAME, task='keypoint_detection')(Registered)
    return Registered
