"""The training augmentation of semantic segmentation (ESPNet, PSPNet, DeepLab papers)."""

import numpy

from cvzoo import transforms


class SegmentationAugmentation:
    """Random scale, pad to the crop, random crop and random horizontal flip of a pair.

    The image is resized bilinearly, the label map by nearest neighbour; padding fills
    the image with ``pad_value`` and the labels with ``ignore_label``, so padded pixels
    never count in the loss.

    Args:
        crop_size (tuple of int): (H, W) of the output.
        scale_range (tuple of float): factors drawn uniformly (the papers use 0.5 to 2).
        ignore_label (int): label of padded pixels.
        pad_value (float): image value of padded pixels.
        flip (bool): flip left-right with probability 0.5.

    Call it on ``(img, label)``: img (3, H, W) float32, label (H, W) int32; it returns the
    pair at ``crop_size``.

    >>> augment = SegmentationAugmentation((8, 8), scale_range=(1, 1))
    >>> img, label = augment((numpy.zeros((3, 5, 6), numpy.float32),
    ...                       numpy.zeros((5, 6), numpy.int32)))
    >>> img.shape, label.shape, int(label.min())
    ((3, 8, 8), (8, 8), -1)
    """

    def __init__(self, crop_size, scale_range=(0.5, 2.0), ignore_label=-1, pad_value=0.0,
                 flip=True):
        self.crop_size = tuple(crop_size)
        self.scale_range = scale_range
        self.ignore_label = ignore_label
        self.pad_value = pad_value
        self.flip = flip

    def __call__(self, example):
        img, label = example[:2]
        img, param = transforms.random_scale(img, self.scale_range, return_param=True)
        label = transforms.resize(label[None].astype(numpy.float32), param['size'],
                                  'nearest')[0].astype(numpy.int32)
        img, label = self._pad(img, label)
        img, param = transforms.random_crop(img, self.crop_size, return_param=True)
        label = label[param['y_slice'], param['x_slice']]
        if self.flip:
            img, param = transforms.random_flip(img, x_random=True, return_param=True)
            if param['x_flip']:
                label = label[:, ::-1]
        return numpy.ascontiguousarray(img), numpy.ascontiguousarray(label)

    def _pad(self, img, label):
        H, W = img.shape[1:]
        out_H, out_W = max(H, self.crop_size[0]), max(W, self.crop_size[1])
        if (out_H, out_W) == (H, W):
            return img, label
        padded_img = numpy.full((img.shape[0], out_H, out_W), self.pad_value, img.dtype)
        padded_img[:, :H, :W] = img
        padded_label = numpy.full((out_H, out_W), self.ignore_label, numpy.int32)
        padded_label[:H, :W] = label
        return padded_img, padded_label
