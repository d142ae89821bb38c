"""RunLengthMasks: encoding, boxes, areas and pair intersections against dense masks."""

import numpy
import pytest

from cvzoo.datasets.coco import coco_mask_decoding
from cvzoo.evaluators.metrics import run_length_masks
from cvzoo.evaluators.metrics.run_length_masks import RunLengthMasks
from cvzoo.utils import bbox as bbox_ops


def _blobs(rng, n, size):
    masks = numpy.zeros((n,) + size, bool)
    for mask in masks:
        y0, x0 = rng.integers(0, size[0]), rng.integers(0, size[1])
        mask[y0:y0 + rng.integers(1, 20), x0:x0 + rng.integers(1, 20)] = True
        mask &= rng.random(size) < 0.8
    return masks


@pytest.mark.parametrize('size', [(1, 1), (7, 3), (31, 45)], ids=str)
def test_round_trip_area_and_bbox(size):
    rng = numpy.random.default_rng(0)
    masks = _blobs(rng, 12, size)
    masks[0] = False
    masks[1] = True
    runs = RunLengthMasks.from_masks(masks)
    numpy.testing.assert_array_equal(runs.to_masks(size), masks)
    numpy.testing.assert_array_equal(runs.area, masks.sum(axis=(1, 2)))
    numpy.testing.assert_array_equal(runs.bbox, bbox_ops.mask_to_bbox(masks))
    assert runs.size == size and len(runs) == 12


def test_intersection_of_every_pair_equals_dense_counts():
    rng = numpy.random.default_rng(1)
    size = (40, 50)
    a = numpy.concatenate([_blobs(rng, 15, size), rng.random((3,) + size) < 0.5])
    b = numpy.concatenate([_blobs(rng, 9, size), numpy.zeros((1,) + size, bool)])
    runs_a, runs_b = RunLengthMasks.from_masks(a), RunLengthMasks.from_masks(b)
    i, j = numpy.meshgrid(numpy.arange(len(a)), numpy.arange(len(b)), indexing='ij')
    expected = (a[:, None] & b[None]).sum(axis=(2, 3))
    got = runs_a.intersection(i.ravel(), runs_b, j.ravel()).reshape(expected.shape)
    numpy.testing.assert_array_equal(got, expected)
    assert expected[expected > 0].size > 10  # the case has overlaps to count


def test_chunked_walk_and_concatenation(monkeypatch):
    rng = numpy.random.default_rng(2)
    first, second = rng.random((4, 9, 11)) < 0.5, rng.random((3, 6, 5)) < 0.5
    runs = RunLengthMasks.concatenate([RunLengthMasks.from_masks(first),
                                       RunLengthMasks.from_masks(second)])
    assert runs.size is None and len(runs) == 7
    monkeypatch.setattr(run_length_masks, '_LOOKUPS_PER_CHUNK', 3)
    pairs = numpy.array([[0, 1], [3, 2], [4, 6], [5, 5]])
    got = runs.intersection(pairs[:, 0], runs, pairs[:, 1])
    expected = [(first[0] & first[1]).sum(), (first[3] & first[2]).sum(),
                (second[0] & second[2]).sum(), second[1].sum()]
    numpy.testing.assert_array_equal(got, expected)


@pytest.mark.reference
def test_runs_are_cocos_rle_counts():
    mask_api = pytest.importorskip('pycocotools.mask')
    rng = numpy.random.default_rng(3)
    masks = _blobs(rng, 5, (23, 17))
    runs = RunLengthMasks.from_masks(masks)
    for k, mask in enumerate(masks):
        rle = mask_api.encode(numpy.asfortranarray(mask.astype(numpy.uint8)))
        expected = coco_mask_decoding.rle_string_to_counts(rle['counts'])
        starts = runs.starts[runs.offsets[k]:runs.offsets[k + 1]]
        ends = runs.ends[runs.offsets[k]:runs.offsets[k + 1]]
        ours = numpy.diff(numpy.r_[0, numpy.c_[starts, ends].ravel(), 23 * 17])
        numpy.testing.assert_array_equal(ours[ours > 0], expected[expected > 0])
        assert mask_api.area(rle) == runs.area[k]


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r'masks: expected an \(R, H, W\)'):
        RunLengthMasks.from_masks(numpy.zeros((3, 4), bool))
    with pytest.raises(ValueError, match=r'pred_masks\[1\]'):
        run_length_masks.per_image('pred_masks', [numpy.zeros((0, 2, 2)), numpy.zeros(3)])
    with pytest.raises(ValueError, match='gt_masks: expected one entry per image'):
        run_length_masks.per_image('gt_masks', [numpy.zeros((0, 2, 2))], n_img=2)
