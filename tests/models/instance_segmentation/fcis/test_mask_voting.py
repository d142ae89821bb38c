"""mask_voting against ChainerCV's algorithm written out one instance and pixel at a time."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.instance_segmentation.fcis import mask_voting
from tests.helpers import opencv_resize


def _iou(a, b):
    tl, br = numpy.maximum(a[:2], b[:2]), numpy.minimum(a[2:], b[2:])
    inter = numpy.prod(numpy.clip(br - tl, 0, None))
    union = numpy.prod(a[2:] - a[:2]) + numpy.prod(b[2:] - b[:2]) - inter
    return inter / union if union > 0 else 0.0


def _nms(bbox, score, thresh):
    kept = []
    # ChainerCV's reversed argsort: among equal scores the later box first
    for i in numpy.argsort(score, kind='stable')[::-1]:
        if all(_iou(bbox[i], bbox[k]) < thresh for k in kept):
            kept.append(i)
    return kept


def _reference(seg_prob, bbox, cls_prob, size, score_thresh, nms_thresh, merge_thresh,
               binary_thresh, limit):
    """ChainerCV's mask_voting (x-first boxes), instances then sorted by score."""
    pairs = []
    for label in range(1, cls_prob.shape[1]):
        pairs += [(cls_prob[i, label], label - 1, i)
                  for i in _nms(bbox, cls_prob[:, label], nms_thresh)]
    scores = sorted((p[0] for p in pairs), reverse=True)
    floor = max(scores[min(len(scores), limit) - 1], score_thresh)
    results = []
    for score, label, i in pairs:
        if score < floor:
            continue
        voters = [j for j in range(len(bbox)) if _iou(bbox[j], bbox[i]) >= merge_thresh]
        weight = cls_prob[voters, label + 1] / cls_prob[voters, label + 1].sum()
        votes = numpy.zeros(size, numpy.float32)
        for j, w in zip(voters, weight):
            x0, y0, x1, y1 = numpy.round(bbox[j]).astype(int)
            if y1 - y0 > 0 and x1 - x0 > 0:
                votes[y0:y1, x0:x1] += (opencv_resize.resize(seg_prob[j], y1 - y0, x1 - x0)
                                        >= binary_thresh) * w
        ys, xs = numpy.nonzero(votes >= binary_thresh)
        if len(ys) == 0:
            continue
        box = numpy.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
        crop = votes[box[1]:box[3], box[0]:box[2]]
        prob = numpy.clip(opencv_resize.resize(crop, *seg_prob.shape[1:]), 0, 1)
        results.append((score, label, box, prob))
    results.sort(key=lambda r: -r[0])
    return results


def _case(rng, n_roi=24, n_class=4, size=(40, 50), grid=7):
    """Boxes scattered around three objects, some hanging over the border."""
    H, W = size
    centre = numpy.array([[12, 10], [30, 25], [40, 12]], numpy.float64)[rng.integers(0, 3, n_roi)]
    half = rng.uniform(3, 12, (n_roi, 2))
    centre += rng.normal(0, 2, (n_roi, 2))
    bbox = numpy.concatenate([centre - half, centre + half], axis=1)
    bbox = numpy.clip(bbox, 0, [W, H, W, H]).astype(numpy.float32)
    seg_prob = rng.uniform(0, 1, (n_roi, grid, grid)).astype(numpy.float32)
    logits = rng.normal(0, 2, (n_roi, n_class))
    cls_prob = (numpy.exp(logits) / numpy.exp(logits).sum(1, keepdims=True)).astype(
        numpy.float32)
    return seg_prob, bbox, cls_prob, size


@pytest.mark.parametrize('limit, score_thresh', [(100, 0.05), (5, 0.05), (100, 0.6)])
def test_equals_chainercv_rules(device, rng, limit, score_thresh):
    seg_prob, bbox, cls_prob, size = _case(rng)
    want = _reference(seg_prob, bbox, cls_prob, size, score_thresh, 0.3, 0.5, 0.4, limit)
    assert want, 'the case must give instances'
    prob, voted_bbox, label, score = mask_voting.mask_voting(
        *(backend.to_device(a, device) for a in (seg_prob, bbox, cls_prob)), size,
        score_thresh=score_thresh, nms_thresh=0.3, limit=limit)
    prob, voted_bbox, label, score = map(backend.to_numpy, (prob, voted_bbox, label, score))
    assert label.dtype == numpy.int32 and score.dtype == numpy.float32
    numpy.testing.assert_array_equal(score, [r[0] for r in want])
    numpy.testing.assert_array_equal(label, [r[1] for r in want])
    numpy.testing.assert_array_equal(voted_bbox, [r[2] for r in want])
    numpy.testing.assert_allclose(prob, [r[3] for r in want], atol=1e-5)


def test_limit_keeps_the_best(rng):
    seg_prob, bbox, cls_prob, size = _case(rng)
    _, _, _, every = mask_voting.mask_voting(seg_prob, bbox, cls_prob, size,
                                             score_thresh=0.0, nms_thresh=0.3)
    _, _, _, best = mask_voting.mask_voting(seg_prob, bbox, cls_prob, size,
                                            score_thresh=0.0, nms_thresh=0.3, limit=3)
    assert len(every) > 3 and len(best) <= 3
    numpy.testing.assert_array_equal(best, every[:len(best)])


def test_no_candidates(device):
    xp_array = [backend.to_device(numpy.zeros(shape, numpy.float32), device)
                for shape in ((0, 7, 7), (0, 4), (0, 3))]
    prob, bbox, label, score = mask_voting.mask_voting(*xp_array, (10, 12), score_thresh=0.1,
                                                       nms_thresh=0.3)
    assert prob.shape == (0, 7, 7) and bbox.shape == (0, 4)
    assert label.shape == (0,) and score.shape == (0,)


def test_equal_scores_keep_the_later_roi(device, rng):
    # RoIs 0 and 2 score alike and overlap: ChainerCV's NMS keeps the later one.
    bbox = numpy.array([[2, 2, 20, 20], [30, 30, 40, 40], [4, 3, 21, 22]], numpy.float32)
    seg_prob = rng.uniform(0.5, 1, (3, 5, 5)).astype(numpy.float32)
    cls_prob = numpy.array([[0.2, 0.8], [0.9, 0.1], [0.2, 0.8]], numpy.float32)
    want = _reference(seg_prob, bbox, cls_prob, (48, 48), 0.5, 0.3, 0.9, 0.4, 100)
    _, voted_bbox, _, score = mask_voting.mask_voting(
        *(backend.to_device(a, device) for a in (seg_prob, bbox, cls_prob)), (48, 48),
        score_thresh=0.5, nms_thresh=0.3, mask_merge_thresh=0.9)
    numpy.testing.assert_array_equal(backend.to_numpy(voted_bbox), [want[0][2]])
    numpy.testing.assert_array_equal(backend.to_numpy(voted_bbox), [[4, 3, 21, 22]])
    assert backend.to_numpy(score).tolist() == [numpy.float32(0.8)]
