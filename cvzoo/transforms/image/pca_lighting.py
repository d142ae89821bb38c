"""AlexNet-style colour augmentation along the principal components of RGB."""

import numpy

# NOTE: the eigen decomposition of ImageNet's RGB covariance on [0, 1] values, as
# published with fb.resnet.torch; columns of IMAGENET_EIGEN_VECTOR are the eigenvectors.
IMAGENET_EIGEN_VALUE = numpy.array((0.2175, 0.0188, 0.0045))
IMAGENET_EIGEN_VECTOR = numpy.array((
    (-0.5675, 0.7192, 0.4009),
    (-0.5808, -0.0045, -0.8140),
    (-0.5836, -0.6948, 0.4203),
))


def pca_lighting(img, sigma, eigen_value=None, eigen_vector=None):
    """Add ``eigen_vector @ (alpha * eigen_value)`` to every pixel, alpha ~ N(0, sigma^2).

    Krizhevsky et al., "ImageNet Classification with Deep Convolutional Neural Networks",
    NIPS 2012, section 4.1. For images in [0, 255] the usual sigma is 0.1 * 255 = 25.5.

    Args:
        img (numpy.ndarray): (3, H, W) RGB.
        sigma (float): standard deviation of alpha; 0 returns the image unchanged.
        eigen_value (array or None): (3,) eigenvalues; ImageNet's by default.
        eigen_vector (array or None): (3, 3) eigenvectors as columns; ImageNet's by default.

    Returns:
        numpy.ndarray: (3, H, W), img's dtype, not clipped.
    """
    if sigma <= 0:
        return img
    eigen_value = IMAGENET_EIGEN_VALUE if eigen_value is None else numpy.asarray(eigen_value)
    eigen_vector = IMAGENET_EIGEN_VECTOR if eigen_vector is None else numpy.asarray(eigen_vector)
    alpha = numpy.random.normal(0, sigma, size=3)
    shift = eigen_vector.dot(eigen_value * alpha)
    return img + shift.astype(img.dtype).reshape(-1, 1, 1)
