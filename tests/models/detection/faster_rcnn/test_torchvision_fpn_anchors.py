"""The anchors of torchvision's Faster R-CNN FPN RPN: by hand and against AnchorGenerator."""

import numpy
import pytest

from cvzoo.models.detection.faster_rcnn import torchvision_rpn


def test_one_cell_by_hand():
    # size 32 at ratio 0.5 (h / w): w = 32 / sqrt(0.5) = 45.25, h = 22.63; halves rounded
    # half to even: 22.627 -> 23, 11.314 -> 11; ratio 2 swaps them; ratio 1 is +-16
    level, = torchvision_rpn.rpn_anchors(numpy, (32, 32), [(1, 1)], (32,))
    numpy.testing.assert_array_equal(level, [[-23, -11, 23, 11], [-16, -16, 16, 16],
                                             [-11, -23, 11, 23]])
    assert level.dtype == numpy.float32


def test_cells_are_row_major_and_strides_are_integer_divisions():
    # a 2 x 3 map of a 64 x 100 input: strides 64 // 2 = 32 and 100 // 3 = 33
    level, = torchvision_rpn.rpn_anchors(numpy, (64, 100), [(2, 3)], (64,), (1.0,))
    centres = (level[:, :2] + level[:, 2:]) / 2
    numpy.testing.assert_array_equal(centres, [[0, 0], [33, 0], [66, 0],
                                               [0, 32], [33, 32], [66, 32]])
    numpy.testing.assert_array_equal(level[:, 2:] - level[:, :2], 64)


def test_level_count_is_checked():
    with pytest.raises(ValueError, match='grid_sizes'):
        torchvision_rpn.rpn_anchors(numpy, (64, 64), [(16, 16)])


@pytest.mark.reference
def test_anchors_are_torchvisions(torchvision):
    import torch
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.image_list import ImageList

    # torchvision's _default_anchorgen of fasterrcnn_resnet50_fpn
    generator = AnchorGenerator(((32,), (64,), (128,), (256,), (512,)), ((0.5, 1.0, 2.0),) * 5)
    img_size, grids = (800, 1088), [(200, 272), (100, 136), (50, 68), (25, 34), (13, 17)]
    images = ImageList(torch.zeros(1, 3, *img_size), [(799, 1066)])
    features = [torch.zeros(1, 1, *grid) for grid in grids]
    expected = generator(images, features)[0].numpy()
    ours = torchvision_rpn.rpn_anchors(numpy, img_size, grids)
    numpy.testing.assert_array_equal(numpy.concatenate(ours), expected)
