import numpy

from cvzoo.transforms import pca_lighting


def test_shift_is_one_colour_per_image(rng):
    img = rng.uniform(0, 255, size=(3, 4, 5)).astype(numpy.float32)
    out = pca_lighting(img, 25.5)
    assert out.dtype == numpy.float32
    shift = out - img
    numpy.testing.assert_allclose(shift, shift[:, :1, :1] * numpy.ones_like(shift), atol=1e-4)
    assert numpy.abs(shift).max() > 0
    assert pca_lighting(img, 0) is img


def test_custom_eigen_basis(rng):
    img = numpy.zeros((3, 1, 1))
    out = pca_lighting(img, 1.0, eigen_value=[1, 0, 0], eigen_vector=numpy.eye(3))
    assert out[1:].sum() == 0 and out[0, 0, 0] != 0
