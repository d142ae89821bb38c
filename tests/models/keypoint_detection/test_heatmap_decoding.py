"""heatmaps_to_points against torchvision's heatmaps_to_keypoints, its groups, devices."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.keypoint_detection import heatmap_decoding


def _rois(rng, n, max_side=90):
    """Boxes of random fractional corners and sides, some thinner than one pixel."""
    corner = rng.uniform(0, 50, (n, 2))
    side = rng.uniform(0.3, max_side, (n, 2))
    side[:2] = [[0.5, 3.2], [2.0, 0.25]]
    return numpy.concatenate((corner, corner + side), axis=1).astype(numpy.float32)


def _heatmaps(rng, n, n_point=5, S=12):
    return rng.normal(0, 3, (n, n_point, S, S)).astype(numpy.float32)


@pytest.mark.reference
def test_same_as_torchvision(torchvision, rng):
    import torch
    from torchvision.models.detection import roi_heads

    heatmap, roi = _heatmaps(rng, 20), _rois(rng, 20)
    expected, expected_score = roi_heads.heatmaps_to_keypoints(torch.from_numpy(heatmap),
                                                               torch.from_numpy(roi))
    point, point_score = heatmap_decoding.heatmaps_to_points(heatmap, roi)
    assert point.dtype == point_score.dtype == numpy.float32
    numpy.testing.assert_allclose(point, expected.numpy()[..., :2], atol=1e-4)
    numpy.testing.assert_allclose(point_score, expected_score.numpy(), atol=1e-4, rtol=1e-4)


@pytest.mark.reference
def test_resized_maps_are_torch_bicubic(rng):
    torch = pytest.importorskip('torch')
    heatmap = _heatmaps(rng, 3, 2, 7)
    height, width = numpy.array([5, 19, 11]), numpy.array([23, 4, 11])
    resized = heatmap_decoding._resize_group(heatmap, height, width, 19, 23)
    for i in range(3):
        expected = torch.nn.functional.interpolate(
            torch.from_numpy(heatmap[i:i + 1]), size=(int(height[i]), int(width[i])),
            mode='bicubic', align_corners=False)[0].numpy()
        # NOTE: torch's compiled kernel fuses multiply-adds: a few float32 ulps apart
        numpy.testing.assert_allclose(resized[i, :, :height[i], :width[i]], expected,
                                      rtol=1e-5, atol=1e-5)
        assert numpy.isneginf(resized[i, :, height[i]:]).all()
        assert numpy.isneginf(resized[i, :, :, width[i]:]).all()


def test_groups_give_the_same_points(rng):
    heatmap, roi = _heatmaps(rng, 12), _rois(rng, 12)
    whole = heatmap_decoding.heatmaps_to_points(heatmap, roi)
    assert len(heatmap_decoding._groups(*[numpy.array([90] * 12)] * 2, 5, 2000)) > 1
    for max_elements in (1, 5 * 40 * 40, 10 ** 9):
        grouped = heatmap_decoding.heatmaps_to_points(heatmap, roi, max_elements=max_elements)
        numpy.testing.assert_array_equal(grouped[0], whole[0])
        numpy.testing.assert_array_equal(grouped[1], whole[1])


def test_first_pass_rows_do_not_change_the_points(rng):
    heatmap, roi = _heatmaps(rng, 10, S=20), _rois(rng, 10)
    whole = heatmap_decoding.heatmaps_to_points(heatmap, roi, n_row=10 ** 4)
    for n_row in (0, 1, 3):  # few rows: most maps are resized again, whole
        found = heatmap_decoding.heatmaps_to_points(heatmap, roi, n_row=n_row)
        numpy.testing.assert_array_equal(found[0], whole[0])
        numpy.testing.assert_array_equal(found[1], whole[1])


def test_a_peak_is_found_in_the_first_pass(rng):
    yy, xx = numpy.mgrid[:56, :56]
    centre = rng.uniform(5, 50, (6, 4, 2))
    heatmap = 8 * numpy.exp(-((xx - centre[..., :1, None]) ** 2
                              + (yy - centre[..., 1:, None]) ** 2) / 8)
    heatmap = (heatmap + rng.normal(0, 0.1, heatmap.shape)).astype(numpy.float32)
    height, width = numpy.array([30, 90, 200, 56, 7, 150]), numpy.array([80, 40, 120, 56, 3, 9])
    value, row, column, exact = heatmap_decoding._search_group(
        heatmap, height, width, (200, 120), heatmap_decoding.N_ROW)
    assert exact.all()
    for i in range(6):
        resized = heatmap_decoding._resize_group(heatmap[i:i + 1], height[i:i + 1],
                                                 width[i:i + 1], height[i], width[i])[0]
        flat = resized.reshape(4, -1)
        numpy.testing.assert_array_equal(value[i], flat.max(axis=1))
        numpy.testing.assert_array_equal(row[i] * width[i] + column[i], flat.argmax(axis=1))


def test_groups_cover_every_roi_once():
    height = numpy.array([50, 40, 40, 10, 3, 1])
    width = numpy.array([5, 60, 10, 10, 80, 1])
    groups = heatmap_decoding._groups(height, width, 2, 2 * 3 * 40 * 60)
    assert groups[0] == (0, 1) or groups[0][0] == 0
    covered = numpy.concatenate([numpy.arange(start, stop) for start, stop in groups])
    numpy.testing.assert_array_equal(covered, numpy.arange(6))
    for start, stop in groups:
        cost = (stop - start) * 2 * height[start] * width[start:stop].max()
        assert stop - start == 1 or cost <= 2 * 3 * 40 * 60


def test_peak_at_the_pixel_centre():
    heatmap = numpy.zeros((2, 1, 8, 8), numpy.float32)
    heatmap[0, 0, 3, 5] = heatmap[1, 0, 0, 7] = 4
    roi = numpy.array([[0, 0, 8, 8], [10, 20, 26, 36]], numpy.float32)
    point, point_score = heatmap_decoding.heatmaps_to_points(heatmap, roi)
    numpy.testing.assert_array_equal(point[0, 0], [5.5, 3.5])  # same size: no resize
    assert point_score[0, 0] == 4
    assert 26 - 2 < point[1, 0, 0] < 26 and 20 < point[1, 0, 1] < 22  # top right corner


def test_no_roi():
    point, point_score = heatmap_decoding.heatmaps_to_points(
        numpy.zeros((0, 3, 8, 8), numpy.float32), numpy.zeros((0, 4), numpy.float32))
    assert point.shape == (0, 3, 2) and point_score.shape == (0, 3)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match='heatmap'):
        heatmap_decoding.heatmaps_to_points(numpy.zeros((1, 3, 8, 7), numpy.float32),
                                            numpy.zeros((1, 4), numpy.float32))
    with pytest.raises(ValueError, match='roi'):
        heatmap_decoding.heatmaps_to_points(numpy.zeros((2, 3, 8, 8), numpy.float32),
                                            numpy.zeros((1, 4), numpy.float32))


def test_on_the_device(device, rng):
    heatmap, roi = _heatmaps(rng, 6), _rois(rng, 6)
    expected = heatmap_decoding.heatmaps_to_points(heatmap, roi)
    point, point_score = heatmap_decoding.heatmaps_to_points(
        backend.to_device(heatmap, device), backend.to_device(roi, device))
    assert backend.get_device_from_array(point) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(point), expected[0])
    numpy.testing.assert_array_equal(backend.to_numpy(point_score), expected[1])
    on_host = heatmap_decoding.heatmaps_to_points(backend.to_device(heatmap, device), roi)
    assert backend.get_device_from_array(on_host[0]) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(on_host[0]), expected[0])
