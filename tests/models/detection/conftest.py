"""Shared by the ChainerCV reference tests of the detectors (issue #5).

``chainercv_detection`` gives the two input images every reference test feeds to both
implementations, the script lines that write ChainerCV's predictions into ``OUTPUTS``,
and the comparison of ChainerCV's detections (y-first boxes, ordered by class) with
cvzoo's (x-first boxes, ordered by decreasing score).
"""

import types

import numpy
import pytest

from cvzoo.models.detection import detector

# Two sizes, neither square, so that x/y mix-ups and per-image scales show.
IMAGE_SIZES = ((100, 140), (90, 120))

# Appended to a ChainerCV script that has built ``model`` and ``imgs``: the detections of
# both presets, per image, as OUTPUTS '<preset>/<bbox|label|score>/<image index>'.
PREDICT_BOTH_PRESETS = '''
for preset in ('evaluate', 'visualize'):
    model.use_preset(preset)
    bboxes, labels, scores = model.predict(imgs)
    for i, (bbox, label, score) in enumerate(zip(bboxes, labels, scores)):
        OUTPUTS[f'{preset}/bbox/{i}'] = numpy.asarray(bbox, numpy.float32).reshape(-1, 4)
        OUTPUTS[f'{preset}/label/{i}'] = numpy.asarray(label, numpy.int32)
        OUTPUTS[f'{preset}/score/{i}'] = numpy.asarray(score, numpy.float32)
'''


def images(rng):
    """Two float32 RGB CHW images in [0, 255] of the sizes IMAGE_SIZES, as a dict
    ``{'img0': ..., 'img1': ...}`` (the reference script's INPUTS)."""
    return {f'img{i}': rng.uniform(0, 255, (3, H, W)).astype(numpy.float32)
            for i, (H, W) in enumerate(IMAGE_SIZES)}


def _unmatched(expected, actual, score_tol, box_atol):
    """Indexes of ``expected`` detections with no partner in ``actual``, one to one.

    Each is (bbox, label, score) of one image. A partner has the same label, a score
    within ``score_tol`` and every coordinate within ``box_atol``; the partners are
    taken greedily in ChainerCV's order, the closest (box and score, each relative to its
    tolerance) first.
    """
    used = numpy.zeros(len(actual[2]), bool)
    missing = []
    for i in range(len(expected[2])):
        fits = ~used & (actual[1] == expected[1][i])
        fits &= numpy.abs(actual[2] - expected[2][i]) <= score_tol
        fits &= (numpy.abs(actual[0] - expected[0][i]) <= box_atol).all(axis=1)
        if not fits.any():
            missing.append(i)
            continue
        candidates = numpy.nonzero(fits)[0]
        distance = numpy.abs(actual[0][candidates] - expected[0][i]).max(axis=1) / box_atol
        distance += numpy.abs(actual[2][candidates] - expected[2][i]) / score_tol
        used[candidates[numpy.argmin(distance)]] = True
    return missing


def assert_same_detections(outputs, preset, result, *, box_convention='continuous',
                           box_tol=1e-3, score_tol=1e-4):
    """cvzoo's ``result`` of predict() equals ChainerCV's ``outputs`` for ``preset``.

    ChainerCV lists the detections class by class, each class in NMS order (decreasing
    score); cvzoo by decreasing score over all classes. The check: cvzoo's scores
    decrease, there are as many detections, and they pair one to one with ChainerCV's
    (same class, score and box within the tolerances). ChainerCV's boxes are clipped to
    the image first: cvzoo's contract keeps boxes inside the image, and clipping after
    the NMS changes no other result; weights with inclusive boxes then get cvzoo's
    conversion (:func:`cvzoo.models.detection.detector.as_continuous`). Pairing, not
    sorting both sides, because two detections of a class whose scores differ by float
    rounding only may come in either order.

    Args:
        outputs (dict): the reference script's OUTPUTS (see PREDICT_BOTH_PRESETS).
        preset (str): 'evaluate' or 'visualize'.
        result (tuple): cvzoo's ``(bboxes, labels, scores)``.
        box_convention (str): the model's ``box_convention`` ('continuous' or
            'inclusive').
        box_tol (float): box tolerance, as a fraction of the image's longer side.
        score_tol (float): absolute score tolerance.
    """
    bboxes, labels, scores = result
    assert len(bboxes) == len(IMAGE_SIZES)
    for i, size in enumerate(IMAGE_SIZES):
        H, W = size
        expected_bbox = numpy.clip(outputs[f'{preset}/bbox/{i}'][:, [1, 0, 3, 2]], 0,
                                   [W, H, W, H])
        expected_bbox = detector.as_continuous(expected_bbox.astype(numpy.float32), size,
                                               box_convention)
        expected = (expected_bbox, outputs[f'{preset}/label/{i}'],
                    outputs[f'{preset}/score/{i}'])
        where = f'{preset}, image {i}'
        assert (numpy.diff(scores[i]) <= 0).all(), f'{where}: scores do not decrease'
        assert len(scores[i]) == len(expected[2]), (
            f'{where}: cvzoo finds {len(scores[i])} detections, ChainerCV '
            f'{len(expected[2])}')
        missing = _unmatched(expected, (bboxes[i], labels[i], scores[i]), score_tol,
                             box_tol * max(size))
        assert not missing, (
            f'{where}: {len(missing)} of ChainerCV\'s {len(expected[2])} detections have no '
            f'cvzoo twin, e.g. label {expected[1][missing[0]]} score '
            f'{expected[2][missing[0]]} box {expected[0][missing[0]]}')


@pytest.fixture(scope='session')
def chainercv_detection():
    """Helpers of the ChainerCV reference tests: ``images(rng)``, ``IMAGE_SIZES``,
    ``PREDICT_BOTH_PRESETS`` and ``assert_same_detections``; see this module."""
    return types.SimpleNamespace(images=images, IMAGE_SIZES=IMAGE_SIZES,
                                 PREDICT_BOTH_PRESETS=PREDICT_BOTH_PRESETS,
                                 assert_same_detections=assert_same_detections)
