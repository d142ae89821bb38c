"""SSD's photometric distortion: random brightness, contrast, saturation and hue."""

import numpy


def _rgb_to_hsv(img):
    """(3, H, W) RGB in [0, 255] -> hue in degrees [0, 360), saturation [0, 1], value."""
    r, g, b = img
    value = img.max(axis=0)
    delta = value - img.min(axis=0)
    saturation = numpy.where(value > 0, delta / numpy.maximum(value, 1e-12), 0)
    safe = numpy.maximum(delta, 1e-12)
    hue = numpy.where(value == r, (g - b) / safe,
                      numpy.where(value == g, 2 + (b - r) / safe, 4 + (r - g) / safe))
    hue = numpy.where(delta > 0, (hue * 60) % 360, 0)
    return hue, saturation, value


def _hsv_to_rgb(hue, saturation, value):
    """Inverse of _rgb_to_hsv, vectorised over pixels."""
    sector = hue / 60.0
    chroma = value * saturation
    # each channel n in (5, 3, 1) is value - chroma * clip(min(k, 4 - k), 0, 1), k = (n + h) mod 6
    channels = []
    for n in (5, 3, 1):
        k = (n + sector) % 6
        channels.append(value - chroma * numpy.clip(numpy.minimum(k, 4 - k), 0, 1))
    return numpy.stack(channels)


def _convert(img, alpha=1, beta=0):
    return img * alpha + beta


def random_distort(img, brightness_delta=32, contrast_low=0.5, contrast_high=1.5,
                   saturation_low=0.5, saturation_high=1.5, hue_delta=18, random_state=None):
    """Distort colours as SSD's training augmentation does.

    Each of brightness, contrast, saturation and hue changes with probability 1/2, and
    contrast comes either first or last (Liu et al., "SSD: Single Shot MultiBox Detector",
    ECCV 2016, and its Caffe code). ``hue_delta`` is on OpenCV's 0..180 hue scale, so 18
    means +-36 degrees. The HSV conversion is vectorised NumPy (no OpenCV).

    Args:
        img (numpy.ndarray): (3, H, W) RGB in [0, 255].
        brightness_delta (float): brightness shift drawn from [-delta, delta].
        contrast_low, contrast_high (float): range of the contrast factor.
        saturation_low, saturation_high (float): range of the saturation factor.
        hue_delta (float): hue shift drawn from [-delta, delta] (OpenCV units).
        random_state (numpy.random.RandomState or None): the generator drawn from (None:
            NumPy's global one).

    Returns:
        numpy.ndarray: (3, H, W), img's dtype, clipped to [0, 255].
    """
    rng = numpy.random if random_state is None else random_state
    dtype = img.dtype
    img = img.astype(numpy.float32)
    if rng.randint(2):
        img = _convert(img, beta=rng.uniform(-brightness_delta, brightness_delta))
    contrast_first = rng.randint(2)
    contrast = rng.uniform(contrast_low, contrast_high)
    if contrast_first and rng.randint(2):
        img = _convert(img, alpha=contrast)
    img = numpy.clip(img, 0, 255)
    change_saturation = rng.randint(2)
    change_hue = rng.randint(2)
    if change_saturation or change_hue:
        hue, saturation, value = _rgb_to_hsv(img)
        if change_saturation:
            saturation = numpy.clip(
                saturation * rng.uniform(saturation_low, saturation_high), 0, 1)
        if change_hue:
            hue = (hue + 2 * rng.uniform(-hue_delta, hue_delta)) % 360
        img = _hsv_to_rgb(hue, saturation, value)
    if not contrast_first and rng.randint(2):
        img = _convert(img, alpha=contrast)
    return numpy.clip(img, 0, 255).astype(dtype, copy=False)
