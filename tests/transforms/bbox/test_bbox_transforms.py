import numpy
import pytest

from cvzoo.transforms import (crop_bbox, flip, flip_bbox, random_crop_with_bbox_constraints,
                              random_rotate, resize_bbox, rotate_bbox, translate_bbox)

BBOX = numpy.array([[1, 2, 4, 6], [0, 0, 8, 5]], numpy.float32)


def test_resize_and_translate():
    numpy.testing.assert_array_equal(resize_bbox(BBOX, (10, 8), (5, 16)),
                                     [[2, 1, 8, 3], [0, 0, 16, 2.5]])
    numpy.testing.assert_array_equal(translate_bbox(BBOX, y_offset=1, x_offset=-1),
                                     [[0, 3, 3, 7], [-1, 1, 7, 6]])


def _paint(bbox, size):
    canvas = numpy.zeros((1,) + size)
    for x_min, y_min, x_max, y_max in bbox.astype(int):
        canvas[0, y_min:y_max, x_min:x_max] += 1
    return canvas


@pytest.mark.parametrize('y_flip, x_flip', [(True, False), (False, True), (True, True)],
                         ids=['y', 'x', 'both'])
def test_flip_follows_the_image(y_flip, x_flip):
    size = (7, 9)
    flipped = flip_bbox(BBOX, size, y_flip, x_flip)
    numpy.testing.assert_array_equal(_paint(flipped, size), flip(_paint(BBOX, size), y_flip, x_flip))
    numpy.testing.assert_array_equal(flip_bbox(flipped, size, y_flip, x_flip), BBOX)


def test_rotate_follows_the_image(rng):
    size = (7, 9)
    for _ in range(12):
        img, param = random_rotate(_paint(BBOX, size), return_param=True)
        numpy.testing.assert_array_equal(_paint(rotate_bbox(BBOX, param['k'], size), img.shape[1:]),
                                         img)


def test_crop_keeps_index_in_step():
    bbox = numpy.array([[0, 0, 4, 4], [6, 6, 8, 8], [3, 1, 10, 3]], numpy.float32)
    out, param = crop_bbox(bbox, slice(1, 5), slice(2, 5), return_param=True)
    numpy.testing.assert_array_equal(param['index'], [0, 2])
    numpy.testing.assert_array_equal(out, [[0, 0, 2, 3], [1, 0, 3, 2]])
    assert out.dtype == numpy.float32
    out, param = crop_bbox(bbox, slice(1, 5), slice(2, 5), allow_outside_center=False,
                           return_param=True)
    numpy.testing.assert_array_equal(param['index'], [0])


def test_crop_removing_every_box_says_so():
    out, param = crop_bbox(BBOX, slice(50, 60), slice(50, 60), return_param=True)
    assert out.shape == (0, 4) and len(param['index']) == 0
    out, param = crop_bbox(BBOX, return_param=True)
    numpy.testing.assert_array_equal(out, BBOX)
    with pytest.raises(ValueError, match='x_slice'):
        crop_bbox(BBOX, x_slice=slice(0, 4, 2))


def test_random_crop_with_constraints(rng):
    img = numpy.zeros((3, 60, 80), numpy.float32)
    bbox = numpy.array([[10, 10, 40, 40]], numpy.float32)
    seen = set()
    for _ in range(30):
        out, param = random_crop_with_bbox_constraints(img, bbox, return_param=True)
        y_slice, x_slice = param['y_slice'], param['x_slice']
        assert out.shape[1:] == (y_slice.stop - y_slice.start, x_slice.stop - x_slice.start)
        seen.add(param['constraint'])
        if param['constraint'] is not None and param['constraint'][0] is not None:
            window = numpy.array([[x_slice.start, y_slice.start, x_slice.stop, y_slice.stop]])
            from cvzoo.utils.bbox import bbox_iou
            assert bbox_iou(bbox, window.astype(numpy.float32))[0, 0] >= param['constraint'][0]
    assert None in seen and len(seen) > 2
    out = random_crop_with_bbox_constraints(img, numpy.zeros((0, 4), numpy.float32))
    assert out.ndim == 3
