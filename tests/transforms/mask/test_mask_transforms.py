import numpy

from cvzoo.transforms import flip, flip_mask, resize_mask


def test_flip_mask_follows_flip(rng):
    mask = rng.uniform(size=(2, 4, 5)) > 0.5
    numpy.testing.assert_array_equal(flip_mask(mask, True, True), flip(mask, True, True))
    numpy.testing.assert_array_equal(flip_mask(flip_mask(mask, x_flip=True), x_flip=True), mask)


def test_resize_mask_nearest(rng):
    label = rng.integers(-1, 5, size=(1, 3, 4)).astype(numpy.int32)
    up = resize_mask(label, (6, 8))
    assert up.dtype == numpy.int32
    numpy.testing.assert_array_equal(up[0, ::2, ::2], label[0])
    numpy.testing.assert_array_equal(resize_mask(up, (3, 4)), label)
    assert set(numpy.unique(resize_mask(label, (5, 7)))) <= set(numpy.unique(label))
