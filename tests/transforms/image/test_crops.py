import numpy
import pytest

from cvzoo.transforms import center_crop, random_crop, random_sized_crop, ten_crop


def _img():
    return numpy.arange(3 * 6 * 8, dtype=numpy.float32).reshape(3, 6, 8)


def test_center_crop():
    out, param = center_crop(_img(), (2, 4), return_param=True)
    assert param == {'y_slice': slice(2, 4), 'x_slice': slice(2, 6)}
    numpy.testing.assert_array_equal(out, _img()[:, 2:4, 2:6])
    with pytest.raises(ValueError, match='size'):
        center_crop(_img(), (7, 1))


def test_random_crop_is_a_window(rng):
    for _ in range(20):
        out, param = random_crop(_img(), (3, 5), return_param=True)
        assert out.shape == (3, 3, 5)
        numpy.testing.assert_array_equal(out, _img()[:, param['y_slice'], param['x_slice']])
    assert random_crop(_img(), (6, 8), copy=True).shape == (3, 6, 8)


def test_random_sized_crop_area_and_ratio(rng):
    img = numpy.zeros((3, 100, 100), numpy.float32)
    for _ in range(20):
        out, param = random_sized_crop(img, return_param=True)
        H, W = out.shape[1:]
        assert 1 <= H <= 100 and 1 <= W <= 100
        if H < 100 and W < 100:
            assert H * W == pytest.approx(param['scale_ratio'] * 10000, rel=0.1, abs=30)
            assert W / H == pytest.approx(param['aspect_ratio'], rel=0.1)


def test_ten_crop_order():
    crops = ten_crop(_img(), (2, 3))
    assert crops.shape == (10, 3, 2, 3)
    numpy.testing.assert_array_equal(crops[0], _img()[:, 2:4, 2:5])
    numpy.testing.assert_array_equal(crops[1], _img()[:, :2, :3])
    numpy.testing.assert_array_equal(crops[2], _img()[:, 4:, :3])
    numpy.testing.assert_array_equal(crops[3], _img()[:, :2, 5:])
    numpy.testing.assert_array_equal(crops[4], _img()[:, 4:, 5:])
    numpy.testing.assert_array_equal(crops[5:], crops[:5, :, :, ::-1])
