import numpy
import pytest

from cvzoo.utils.bbox import (bbox_area, bbox_iou, bbox_to_coco, clip_bbox, coco_to_bbox,
                              mask_iou, mask_to_bbox)


def test_bbox_iou_hand_computed():
    a = numpy.array([[0, 0, 2, 2], [0, 0, 4, 4]], numpy.float32)
    b = numpy.array([[1, 1, 3, 3], [0, 0, 2, 2], [10, 10, 11, 11], [2, 0, 4, 2]], numpy.float32)
    expected = numpy.array([[1 / 7, 1, 0, 0], [4 / 16, 4 / 16, 0, 4 / 16]])
    iou = bbox_iou(a, b)
    assert iou.shape == (2, 4) and iou.dtype == numpy.float32
    numpy.testing.assert_allclose(iou, expected, rtol=1e-6)


def test_bbox_iou_empty_and_degenerate():
    assert bbox_iou(numpy.zeros((0, 4)), numpy.zeros((3, 4))).shape == (0, 3)
    point = numpy.array([[1, 1, 1, 1]], numpy.float32)
    assert bbox_iou(point, point)[0, 0] == 0
    assert bbox_iou(numpy.array([[0, 0, 2, 2]]), numpy.array([[0, 0, 2, 2]])).dtype == numpy.float32
    with pytest.raises(ValueError, match='bbox_b'):
        bbox_iou(point, numpy.zeros((3, 5)))


def test_bbox_area_and_clip():
    bbox = numpy.array([[-1, 2, 5, 12], [3, 3, 2, 9]], numpy.float32)
    numpy.testing.assert_array_equal(bbox_area(bbox), [60, 0])
    numpy.testing.assert_array_equal(clip_bbox(bbox, (10, 4)), [[0, 2, 4, 10], [3, 3, 2, 9]])
    with pytest.raises(ValueError, match='size'):
        clip_bbox(bbox, (10,))


def test_coco_round_trip(rng):
    bbox = rng.uniform(0, 100, (6, 4)).astype(numpy.float32)
    bbox[:, 2:] += bbox[:, :2]
    coco = bbox_to_coco(bbox)
    numpy.testing.assert_allclose(coco[:, 2:], bbox[:, 2:] - bbox[:, :2])
    numpy.testing.assert_allclose(coco_to_bbox(coco), bbox, rtol=1e-6)


def test_mask_to_bbox():
    mask = numpy.zeros((3, 6, 8), bool)
    mask[0, 2:4, 1:6] = True
    mask[1, 5, 7] = True
    bbox = mask_to_bbox(mask)
    assert bbox.dtype == numpy.float32
    numpy.testing.assert_array_equal(bbox, [[1, 2, 6, 4], [7, 5, 8, 6], [0, 0, 0, 0]])


def test_mask_iou_matches_count(rng):
    a = rng.uniform(size=(3, 5, 6)) > 0.5
    b = rng.uniform(size=(4, 5, 6)) > 0.5
    b[0] = False
    iou = mask_iou(a, b)
    for i in range(3):
        for j in range(4):
            union = (a[i] | b[j]).sum()
            expected = (a[i] & b[j]).sum() / union if union else 0
            assert iou[i, j] == pytest.approx(expected)
    with pytest.raises(ValueError, match='mask_b'):
        mask_iou(a, b[:, :4])
