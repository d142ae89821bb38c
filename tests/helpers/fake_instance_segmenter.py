"""A stand-in instance segmenter for the evaluator, script, CLI and bench tests.

:class:`FakeInstanceSegmenter` keeps the DESIGN.md predict() contract of the task
without a network: each image is answered from a table of predictions chosen by the
image's mean value (tests write images of one flat grey level per image), or, for an
image it does not know, with random masks drawn from a seed and the image size.
"""

import typing

import numpy
import pytest

from cvzoo.core.links import link
from cvzoo.datasets.voc import voc_label_names
from cvzoo.models import registry, zoo
from cvzoo.utils import image as image_utils

NAME = 'fake_instance_segmenter'
PRESETS = {'visualize': (0.7, 0.3), 'evaluate': (0.05, 0.5)}  # score_thresh, nms_thresh


def flat_image(level, size):
    """A (3, H, W) float32 image of one grey ``level``: the key of its predictions."""
    return numpy.full((3,) + tuple(size), float(level), numpy.float32)


def random_instances(rng, n, size, n_fg_class):
    """``masks, labels, scores`` of ``n`` random rectangles with holes."""
    H, W = size
    masks = numpy.zeros((n, H, W), bool)
    y0, x0 = rng.integers(0, H, n), rng.integers(0, W, n)
    heights, widths = rng.integers(1, H + 1, n), rng.integers(1, W + 1, n)
    rows, cols = numpy.arange(H)[None, :, None], numpy.arange(W)[None, None, :]
    masks[:] = ((rows >= y0[:, None, None]) & (rows < (y0 + heights)[:, None, None])
                & (cols >= x0[:, None, None]) & (cols < (x0 + widths)[:, None, None]))
    masks &= rng.random((n, H, W)) < 0.9
    labels = rng.integers(0, n_fg_class, n).astype(numpy.int32)
    scores = numpy.sort(rng.random(n))[::-1].astype(numpy.float32)
    return masks, labels, scores


class FakeInstanceSegmenter(link.Link):
    """``masks, labels, scores = predict(imgs)`` from a table keyed by grey level.

    Args:
        answers (dict or None): grey level (int) -> ``(masks, labels, scores)``.
        n_fg_class (int): the class count (labels of the random answers).
        label_names (sequence of str or None): names of the classes.
        seed (int): seed of the random answers to unknown images.
        pretrained_model: a key of ``weights`` takes its class count and names; else
            ignored.
    """

    weights: typing.ClassVar[dict] = {}
    default_answers: typing.ClassVar[dict] = {}  # used when ``answers`` is None

    def __init__(self, answers=None, n_fg_class=3, label_names=None, seed=0,
                 pretrained_model=None):
        super().__init__()
        entry = self.weights.get(pretrained_model) if isinstance(pretrained_model, str) \
            else None
        if entry is not None:
            n_fg_class, label_names = entry.n_class, entry.label_names
        self.answers = dict(self.default_answers if answers is None else answers)
        self.n_fg_class = n_fg_class
        self.label_names = (tuple(label_names) if label_names is not None
                            else tuple(f'class{k}' for k in range(n_fg_class)))
        self.seed = seed
        self.calls = 0
        self.use_preset('visualize')

    def use_preset(self, preset):
        """Set ``score_thresh`` and ``nms_thresh`` of 'visualize' or 'evaluate'."""
        if preset not in PRESETS:
            raise ValueError(f'preset: expected one of {sorted(PRESETS)}, got {preset!r}')
        self.score_thresh, self.nms_thresh = PRESETS[preset]

    def _answer(self, img):
        mean = float(img.mean())
        # NOTE: within 3 grey levels, so that a JPEG of a flat image still finds its answer
        nearest = min(self.answers, key=lambda level: abs(level - mean), default=None)
        if nearest is not None and abs(nearest - mean) <= 3:
            return self.answers[nearest]
        rng = numpy.random.default_rng([self.seed, *img.shape])
        masks, labels, scores = random_instances(rng, 6, img.shape[1:], self.n_fg_class)
        keep = scores >= self.score_thresh
        return masks[keep], labels[keep], scores[keep]

    def predict(self, imgs):
        """One ``(R, H, W) bool, (R,) int32, (R,) float32`` answer per image."""
        self.calls += 1
        answers = [self._answer(_as_chw(img)) for img in imgs]
        return tuple([numpy.asarray(a[k]) for a in answers] for k in range(3))


def _as_chw(img):
    if isinstance(img, (str, bytes)) or hasattr(img, '__fspath__'):
        return image_utils.read_image(img)
    return numpy.asarray(img, numpy.float32)


def weights_entry(label_names=('cat', 'dog', 'person'), metric='mask_map_coco',
                  dataset='coco_val2017', reported_value=0.375):
    """A weights entry of ``label_names`` that reports ``reported_value``."""
    return zoo.Weights(
        url='https://example.invalid/fake.npz', sha256='0' * 64, source_format='cvzoo_npz',
        n_class=len(label_names), label_names=tuple(label_names),
        preset=zoo.Preset(size=8, mean=(0.0, 0.0, 0.0)),
        reported=zoo.Score(metric, reported_value, dataset, 'a test'))


@pytest.fixture
def fake_instance_segmenter(monkeypatch):
    """Register :class:`FakeInstanceSegmenter` as 'fake_instance_segmenter' in a registry
    that holds it alone; return the class. Weights keys: 'coco' (cat, dog, person) and
    'voc' (the 20 VOC classes)."""

    class Registered(FakeInstanceSegmenter):
        weights: typing.ClassVar[dict] = {
            'coco': weights_entry(),
            'voc': weights_entry(voc_label_names.voc_bbox_label_names, 'map_voc07',
                                 'voc2012_val', 0.5)}

    monkeypatch.setattr(registry, '_REGISTRY', {})
    monkeypatch.setattr('cvzoo.models.discovery.import_all_models', lambda: None)
    zoo.register(NAME, task='instance_segmentation')(Registered)
    return Registered
