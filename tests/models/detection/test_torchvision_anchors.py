"""RetinaNet's anchors against values computed by hand."""

import numpy
import pytest

from cvzoo.models.detection import torchvision_anchors


def test_level_sizes_are_torchvisions_ints():
    assert [torchvision_anchors.level_sizes(s) for s in torchvision_anchors.ANCHOR_BASE_SIZES] == [
        (32, 40, 50), (64, 80, 101), (128, 161, 203), (256, 322, 406), (512, 645, 812)]


def test_cell_anchors_of_p3_by_hand():
    # ratio 0.5: w = s * sqrt(2), h = s / sqrt(2); halves rounded: 32 -> (22.63, 11.31)
    expected = numpy.array([
        [-23, -11, 23, 11], [-28, -14, 28, 14], [-35, -18, 35, 18],
        [-16, -16, 16, 16], [-20, -20, 20, 20], [-25, -25, 25, 25],
        [-11, -23, 11, 23], [-14, -28, 14, 28], [-18, -35, 18, 35]], numpy.float32)
    cell = torchvision_anchors.cell_anchors((32, 40, 50))
    assert cell.dtype == numpy.float32
    numpy.testing.assert_array_equal(cell, expected)


def test_half_values_round_to_even():
    # size 45 at ratio 1: half 22.5 -> 22 (torch.round and numpy.round: half to even)
    numpy.testing.assert_array_equal(torchvision_anchors.cell_anchors((45,), (1.0,)),
                                     [[-22, -22, 22, 22]])


def test_level_anchors_row_major_cells_then_anchors():
    cell = numpy.array([[-1, -2, 1, 2], [-3, -3, 3, 3]], numpy.float32)
    level = torchvision_anchors.level_anchors(numpy, cell, (2, 3), (10, 7))
    assert level.shape == (12, 4) and level.dtype == numpy.float32
    # cell (row 1, column 2): shift (x 14, y 10); its second anchor
    numpy.testing.assert_array_equal(level[(1 * 3 + 2) * 2 + 1], [11, 7, 17, 13])
    numpy.testing.assert_array_equal(level[1], [-3, -3, 3, 3])


STRIDES = {'exact': ((64, 96), (8, 12), (8, 8)),
           'odd_p6': ((800, 1088), (13, 17), (61, 64))}


@pytest.mark.parametrize('img_size, grid, stride', list(STRIDES.values()), ids=list(STRIDES))
def test_stride_is_the_integer_ratio_of_input_to_map(img_size, grid, stride):
    level = torchvision_anchors.retinanet_anchors(numpy, img_size, [grid], (32,))[0]
    per_cell = level.reshape(grid[0], grid[1], 9, 4)
    numpy.testing.assert_array_equal(per_cell[1, 0] - per_cell[0, 0], [[0, stride[0]] * 2] * 9)
    numpy.testing.assert_array_equal(per_cell[0, 1] - per_cell[0, 0], [[stride[1], 0] * 2] * 9)


def test_level_count_is_checked():
    with pytest.raises(ValueError, match='grid_sizes'):
        torchvision_anchors.retinanet_anchors(numpy, (64, 64), [(8, 8)])
