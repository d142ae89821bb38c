"""The training augmentation of semantic segmentation (ESPNet, PSPNet, DeepLab papers)."""

import numpy

from cvzoo import transforms


class SegmentationAugmentation:
    """Random scale, pad to the crop, random crop and random horizontal flip of a pair.

    The image is resized bilinearly, the label map by nearest neighbour; padding fills
    the image with ``pad_value`` and the labels with ``ignore_label``, so padded pixels
    never count in the loss.

    Args:
        crop_size (tuple of int or None): (H, W) of the output; None: the input's own
            size (the scaled image is cropped, or padded, back to it).
        scale_range (tuple of float): factors drawn uniformly (the papers use 0.5 to 2).
        ignore_label (int): label of padded pixels.
        pad_value (float): image value of padded pixels.
        flip (bool): flip left-right with probability 0.5.
        seed (int or None): of the augmentation's own generator (``rng``); None draws
            from NumPy's global one.

    Call it on ``(img, label)``: img (3, H, W) float32, label (H, W) int32; it returns the
    pair at ``crop_size``.

    >>> augment = SegmentationAugmentation((8, 8), scale_range=(1, 1))
    >>> img, label = augment((numpy.zeros((3, 5, 6), numpy.float32),
    ...                       numpy.zeros((5, 6), numpy.int32)))
    >>> img.shape, label.shape, int(label.min())
    ((3, 8, 8), (8, 8), -1)
    """

    def __init__(self, crop_size, scale_range=(0.5, 2.0), ignore_label=-1, pad_value=0.0,
                 flip=True, seed=None):
        if len(scale_range) != 2 or not 0 < scale_range[0] <= scale_range[1]:
            raise ValueError(f'scale_range: expected (low, high) with 0 < low <= high, got '
                             f'{scale_range!r}')
        self.crop_size = None if crop_size is None else tuple(crop_size)
        self.scale_range = scale_range
        self.ignore_label = ignore_label
        self.pad_value = pad_value
        self.flip = flip
        self.rng = numpy.random if seed is None else numpy.random.RandomState(seed)

    def __call__(self, example):
        img, label = example[:2]
        factor = self.rng.uniform(*self.scale_range)
        H, W = img.shape[1:]
        crop_H, crop_W = self.crop_size or (H, W)
        size = (max(1, round(H * factor)), max(1, round(W * factor)))
        img = transforms.resize(img, size)
        label = resize_label(label, size)
        img, label = self._pad(img, label, (crop_H, crop_W))
        top = self.rng.randint(img.shape[1] - crop_H + 1)
        left = self.rng.randint(img.shape[2] - crop_W + 1)
        crop = slice(top, top + crop_H), slice(left, left + crop_W)
        img, label = img[:, crop[0], crop[1]], label[crop]
        if self.flip and self.rng.randint(2):
            img, label = img[:, :, ::-1], label[:, ::-1]
        return numpy.ascontiguousarray(img), numpy.ascontiguousarray(label)

    def _pad(self, img, label, crop_size):
        return pad_pair(img, label, crop_size, self.pad_value, self.ignore_label)


def pad_pair(img, label, size, pad_value=0.0, ignore_label=-1):
    """Pad an image and its label map at the bottom and right to at least ``size`` (H, W):
    the image with ``pad_value``, the labels with ``ignore_label``.

    >>> img, label = pad_pair(numpy.ones((3, 2, 3)), numpy.zeros((2, 3), numpy.int32), (3, 3))
    >>> img.shape, label[2].tolist()
    ((3, 3, 3), [-1, -1, -1])
    """
    H, W = img.shape[1:]
    out_H, out_W = max(H, size[0]), max(W, size[1])
    if (out_H, out_W) == (H, W):
        return img, label
    padded_img = numpy.full((img.shape[0], out_H, out_W), pad_value, img.dtype)
    padded_img[:, :H, :W] = img
    padded_label = numpy.full((out_H, out_W), ignore_label, numpy.int32)
    padded_label[:H, :W] = label
    return padded_img, padded_label


def resize_label(label, size):
    """An (H, W) int32 label map resized to ``size`` by nearest neighbour (no blended
    classes)."""
    return transforms.resize(numpy.asarray(label)[None].astype(numpy.float32), size,
                             'nearest')[0].astype(numpy.int32)
