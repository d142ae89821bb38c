import numpy
import pytest
from PIL import Image

from cvzoo.transforms import resize


@pytest.mark.parametrize('interpolation', ['nearest', 'bilinear', 'bicubic'])
def test_matches_pillow_on_uint8_values(rng, interpolation):
    hwc = rng.integers(0, 256, (6, 8, 3), dtype=numpy.uint8)
    img = hwc.transpose(2, 0, 1).astype(numpy.float32)
    out = resize(img, (3, 5), interpolation)
    assert out.shape == (3, 3, 5) and out.dtype == numpy.float32
    resample = getattr(Image.Resampling, interpolation.upper())
    expected = numpy.asarray(Image.fromarray(hwc).resize((5, 3), resample), numpy.float32)
    numpy.testing.assert_allclose(out, expected.transpose(2, 0, 1), atol=1.01)


def test_constant_image_stays_constant_and_keeps_range():
    img = numpy.full((2, 4, 4), 300.5, numpy.float32)
    numpy.testing.assert_allclose(resize(img, (7, 9)), 300.5, rtol=1e-6)
    assert resize(img, (4, 4)) is not img


def test_bad_arguments():
    with pytest.raises(ValueError, match='interpolation'):
        resize(numpy.zeros((3, 2, 2)), (1, 1), 'cubic')
    with pytest.raises(ValueError, match='size'):
        resize(numpy.zeros((3, 2, 2)), (0, 1))
