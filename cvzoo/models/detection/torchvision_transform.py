"""torchvision's ``GeneralizedRCNNTransform`` for inference: normalise, resize, pad.

An image (RGB in [0, 255]) is divided by 255, normalised by ImageNet's mean and std,
and resized (bilinear, half-pixel centres, no antialiasing: torch's ``interpolate``)
by one factor so that its shorter side becomes ``min_size`` unless its longer side
would pass ``max_size``. As torchvision (0.28, eager mode) does, the factor is a Python
float (double) and the new size is ``floor(side * factor)``, so 375 -> 800 at min_size
800. (Scripted or traced torchvision, and some earlier releases, divide float32
tensors instead, which can give one pixel less, e.g. 799.)
A batch is zero-padded at the bottom and right to a common size, a multiple of 32.
"""

import math

import numpy

import cvzoo.core.functions as F
from cvzoo.core import config
from cvzoo.models.common import imagenet_presets

# on [0, 1], as torchvision normalises
_MEAN = tuple(m / 255 for m in imagenet_presets.IMAGENET_MEAN)
_STD = tuple(s / 255 for s in imagenet_presets.IMAGENET_STD)


def resized_size(size, min_size, max_size):
    """(H, W) -> the resized (H', W') of the rule above.

    >>> resized_size((375, 500), 800, 1333)
    (800, 1066)
    """
    scale = min(min_size / min(size), max_size / max(size))
    return tuple(max(math.floor(n * scale), 1) for n in size)


def prepare_image(img, min_size, max_size, mean=_MEAN, std=_STD):
    """(3, H, W) float RGB in [0, 255] -> (3, H', W') float32 normalised and resized."""
    img = numpy.asarray(img, numpy.float32) / numpy.float32(255)
    img = (img - numpy.asarray(mean, numpy.float32)[:, None, None]) \
        / numpy.asarray(std, numpy.float32)[:, None, None]
    size = resized_size(img.shape[1:], min_size, max_size)
    with config.no_backprop_mode():
        return F.resize_images(img[None], size, align_corners=False).array[0]


def pad_batch(prepared, stride=32):
    """Stack (3, H_i, W_i) images into (B, 3, H, W), zero-padded; H, W multiples of stride."""
    size = numpy.max([x.shape[1:] for x in prepared], axis=0)
    size = -(-size // stride) * stride
    batch = numpy.zeros((len(prepared), 3, int(size[0]), int(size[1])), numpy.float32)
    for i, x in enumerate(prepared):  # NOTE: one copy per image of the batch
        batch[i, :, :x.shape[1], :x.shape[2]] = x
    return batch
