import numpy

from cvzoo.transforms import flip, random_flip, random_rotate


def test_flip_twice_is_identity(rng):
    img = rng.uniform(size=(3, 4, 5))
    for y_flip in (False, True):
        for x_flip in (False, True):
            once = flip(img, y_flip, x_flip)
            numpy.testing.assert_array_equal(flip(once, y_flip, x_flip), img)
    numpy.testing.assert_array_equal(flip(img, x_flip=True)[:, :, 0], img[:, :, -1])
    numpy.testing.assert_array_equal(flip(img, y_flip=True)[:, 0], img[:, -1])


def test_random_flip_draws_both(rng):
    img = rng.uniform(size=(3, 4, 5))
    seen = set()
    for _ in range(40):
        out, param = random_flip(img, x_random=True, return_param=True)
        assert not param['y_flip']
        seen.add(param['x_flip'])
        numpy.testing.assert_array_equal(out, flip(img, **param))
    assert seen == {False, True}


def test_random_rotate_matches_rot90(rng):
    img = rng.uniform(size=(2, 3, 5))
    seen = set()
    for _ in range(40):
        out, param = random_rotate(img, return_param=True)
        seen.add(param['k'])
        numpy.testing.assert_array_equal(out, numpy.rot90(img, param['k'], axes=(1, 2)))
    assert seen == {0, 1, 2, 3}
