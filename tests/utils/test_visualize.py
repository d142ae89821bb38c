import numpy
import pytest
from PIL import Image

from cvzoo.datasets.coco.coco_keypoint_names import coco_keypoint_names, coco_point_skeleton
from cvzoo.utils.visualize import (vis_bbox, vis_instance_segmentation, vis_point,
                                   vis_semantic_segmentation, voc_colormap)


def test_voc_colormap_known_values():
    colormap = voc_colormap(21)
    assert colormap.shape == (21, 3) and colormap.dtype == numpy.uint8
    assert colormap[15].tolist() == [192, 128, 128]  # VOC 'person'
    assert colormap[20].tolist() == [0, 64, 128]


def test_vis_bbox_draws_outline_and_writes_png(tmp_path):
    img = numpy.zeros((3, 40, 60), numpy.float32)
    bbox = numpy.array([[5, 10, 50, 35]], numpy.float32)
    out = vis_bbox(img, bbox, numpy.array([0]), numpy.array([0.9]), ['cat'],
                   out=tmp_path / 'b.png')
    assert out.shape == (40, 60, 3) and out.dtype == numpy.uint8
    assert out[34, 30].tolist() == [128, 0, 0]  # bottom edge in label 0's colour
    assert out[25, 30].tolist() == [0, 0, 0]    # inside untouched
    assert (out[10:22, 5:40].min(axis=2) > 150).any()  # white caption text
    numpy.testing.assert_array_equal(numpy.asarray(Image.open(tmp_path / 'b.png')), out)
    with pytest.raises(ValueError, match='score'):
        vis_bbox(img, bbox, score=numpy.array([0.1, 0.2]))
    assert vis_bbox(img, numpy.zeros((0, 4))).shape == (40, 60, 3)


def test_vis_semantic_segmentation_blends_and_has_legend(tmp_path):
    img = numpy.full((3, 8, 10), 100, numpy.float32)
    label = numpy.full((8, 10), -1, numpy.int32)
    label[:4] = 1
    out = vis_semantic_segmentation(img, label, ['bg', 'plane'], alpha=0.5,
                                    out=tmp_path / 's.png')
    assert out.shape[0] >= 8 and out.shape[1] > 10
    assert out[6, 5].tolist() == [100, 100, 100]          # ignore: untouched
    assert out[0, 0].tolist() == [114, 50, 50]            # 0.5 * 100 + 0.5 * (128, 0, 0)
    assert (tmp_path / 's.png').is_file()


def test_vis_instance_segmentation(tmp_path):
    img = numpy.zeros((3, 20, 20), numpy.float32)
    mask = numpy.zeros((2, 20, 20), bool)
    mask[0, 2:8, 2:8] = True
    mask[1, 12:18, 12:18] = True
    out = vis_instance_segmentation(img, mask, numpy.array([0, 1]), numpy.array([0.5, 0.7]),
                                    ['a', 'b'], alpha=1.0, out=tmp_path / 'i.png')
    assert out.shape == (20, 20, 3)
    assert out[5, 5].tolist() == [128, 0, 0] and out[15, 15].tolist() == [0, 128, 0]
    assert out[19, 0].tolist() == [0, 0, 0]


def test_vis_point_draws_visible_points_and_limbs(tmp_path):
    img = numpy.zeros((3, 30, 40), numpy.float32)
    # two instances; (x, y) order: instance 0's first point lies at row 4, column 5
    point = numpy.array([[[5, 4], [30, 20], [35, 5]],
                         [[10, 25], [20, 25], [0, 0]]], numpy.float32)
    visible = numpy.array([[True, True, False], [True, True, True]])
    out = vis_point(img, point, visible, skeleton=[(0, 1), (1, 2)], radius=2,
                    out=tmp_path / 'p.png')
    assert out.shape == (30, 40, 3) and out.dtype == numpy.uint8
    assert out[4, 5].tolist() == [128, 0, 0]     # instance 0's colour, not (y, x)
    assert out[5, 4].tolist() != [0, 0, 0] and out[20, 30].tolist() == [128, 0, 0]
    assert out[12, 17].tolist() == [128, 0, 0]   # on the limb 0 -> 1
    assert (out[0:9, 33:38] == 0).all()          # invisible point and its limb: not drawn
    assert out[25, 15].tolist() == [0, 128, 0]   # instance 1's limb
    numpy.testing.assert_array_equal(numpy.asarray(Image.open(tmp_path / 'p.png')), out)
    no_limbs = vis_point(img, point, visible, radius=2)
    assert no_limbs[12, 17].tolist() == [0, 0, 0]
    everything = vis_point(img, point, radius=2)  # visible=None: all points
    assert everything[5, 35].tolist() == [128, 0, 0]


def test_vis_point_coco_skeleton_and_empty():
    assert len(coco_keypoint_names) == 17 and len(coco_point_skeleton) == 19
    assert {i for pair in coco_point_skeleton for i in pair} == set(range(17))
    names = [(coco_keypoint_names[i], coco_keypoint_names[j]) for i, j in coco_point_skeleton]
    assert ('left_ankle', 'left_knee') in names and ('nose', 'left_eye') in names
    img = numpy.full((3, 16, 16), 50, numpy.float32)
    assert (vis_point(img, numpy.zeros((0, 17, 2)), skeleton=coco_point_skeleton) == 50).all()
    point = numpy.random.RandomState(0).uniform(0, 16, (2, 17, 2))
    out = vis_point(img, point, numpy.zeros((2, 17), bool), skeleton=coco_point_skeleton)
    assert (out == 50).all()  # nothing visible, nothing drawn


@pytest.mark.parametrize('kwargs, name', [
    ({'point': numpy.zeros((2, 3))}, 'point'),
    ({'point': numpy.zeros((1, 3, 3))}, 'point'),
    ({'visible': numpy.ones((1, 2), bool)}, 'visible'),
    ({'skeleton': [(0, 1, 2)]}, 'skeleton'),
    ({'skeleton': [(0, 3)]}, 'skeleton'),
    ({'skeleton': [(0.5, 1)]}, 'skeleton'),
], ids=['point-2d', 'point-xyz', 'visible-shape', 'skeleton-triple', 'skeleton-range',
        'skeleton-float'])
def test_vis_point_rejects_bad_shapes(kwargs, name):
    args = {'point': numpy.zeros((1, 3, 2)), 'visible': None, 'skeleton': None}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        vis_point(numpy.zeros((3, 8, 8)), **args)
