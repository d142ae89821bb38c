import numpy

from cvzoo.transforms import flip_bbox, flip_point, resize_bbox, resize_point, translate_point

POINT = numpy.array([[[1, 2], [4, 6]], [[0, 0], [8, 5]]], numpy.float32)  # (R, K, 2) (x, y)


def test_points_move_like_box_corners():
    bbox = POINT.reshape(2, 4)
    numpy.testing.assert_array_equal(
        resize_point(POINT, (10, 8), (5, 16)).reshape(2, 4),
        resize_bbox(bbox, (10, 8), (5, 16)))
    flipped = flip_point(POINT, (7, 9), x_flip=True, y_flip=True)
    numpy.testing.assert_array_equal(flipped[:, ::-1].reshape(2, 4),
                                     flip_bbox(bbox, (7, 9), True, True))
    numpy.testing.assert_array_equal(flip_point(flipped, (7, 9), True, True), POINT)
    numpy.testing.assert_array_equal(translate_point(POINT, 1, 2)[0, 0], [3, 3])
