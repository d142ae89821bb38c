"""SSDTransform: the training augmentation of SSD, ending with the multibox targets.

Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 2.2 "Data
augmentation" and section 3.6, in the order of ChainerCV's ``train.py`` Transform:

1. photometric distortion (brightness, contrast, saturation, hue);
2. with probability 1/2, random expansion (zoom out) up to 4x on a canvas of the mean;
3. a random crop whose IoU with the boxes meets a drawn constraint; boxes whose centre
   leaves the crop are dropped;
4. resize to the network input with a randomly chosen interpolation;
5. random horizontal flip;
6. mean subtraction and encoding of the boxes to per-anchor targets.
"""

import copy

import numpy

from cvzoo import transforms

INTERPOLATIONS = ('nearest', 'bilinear', 'bicubic', 'lanczos')


def resize_with_random_interpolation(img, size):
    """Resize ``img`` (C, H, W) to ``size`` (H, W) with an interpolation drawn at random."""
    interpolation = INTERPOLATIONS[numpy.random.randint(len(INTERPOLATIONS))]
    return transforms.resize(img, size, interpolation=interpolation)


class SSDTransform:
    """Turn a detection example into an SSD training example.

    Args:
        coder (MultiboxCoder): the model's coder (copied to the host).
        insize (int): side of the network input.
        mean (array): (3, 1, 1) float32 RGB mean, as the model's ``mean``.
        max_expand_ratio (float): largest zoom-out factor (4 in the paper).

    Called with ``(img, bbox, label)`` (img (3, H, W) float32 RGB in [0, 255], bbox
    (R, 4) x-first in pixels, label (R,) int32), it returns ``(img, mb_loc, mb_label)``:
    (3, insize, insize) float32 mean subtracted, (K, 4) float32, (K,) int32.

    In training it maps a dataset: ``TransformDataset(train, SSDTransform(model.coder,
    model.insize, model.mean))``.

    >>> from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
    >>> model = SSDTiny(n_fg_class=3)
    >>> transform = SSDTransform(model.coder, model.insize, model.mean)
    >>> img = numpy.full((3, 80, 100), 128, numpy.float32)
    >>> bbox = numpy.array([[10, 10, 60, 50]], numpy.float32)
    >>> img, mb_loc, mb_label = transform((img, bbox, numpy.array([2], numpy.int32)))
    >>> img.shape, mb_loc.shape, mb_label.shape, mb_label.dtype
    ((3, 96, 96), (772, 4), (772,), dtype('int32'))
    """

    def __init__(self, coder, insize, mean, max_expand_ratio=4):
        self.coder = copy.deepcopy(coder).to_device('cpu')
        self.insize = insize
        self.mean = numpy.asarray(mean, numpy.float32).reshape(-1, 1, 1)
        self.max_expand_ratio = max_expand_ratio

    def __call__(self, in_data):
        img, bbox, label = in_data[:3]
        img = transforms.random_distort(numpy.asarray(img, numpy.float32))
        if self.max_expand_ratio > 1 and numpy.random.randint(2):
            img, param = transforms.random_expand(img, self.max_expand_ratio,
                                                  fill=self.mean.ravel(), return_param=True)
            bbox = transforms.translate_bbox(bbox, param['y_offset'], param['x_offset'])
        img, param = transforms.random_crop_with_bbox_constraints(img, bbox, return_param=True)
        bbox, param = transforms.crop_bbox(bbox, param['y_slice'], param['x_slice'],
                                           allow_outside_center=False, return_param=True)
        label = numpy.asarray(label)[param['index']]
        size = (self.insize, self.insize)
        in_size = img.shape[1:]
        img = resize_with_random_interpolation(img, size)
        bbox = transforms.resize_bbox(bbox, in_size, size)
        img, param = transforms.random_flip(img, x_random=True, return_param=True)
        bbox = transforms.flip_bbox(bbox, size, x_flip=param['x_flip'])
        mb_loc, mb_label = self.coder.encode(bbox, label)
        return (img - self.mean).astype(numpy.float32), mb_loc, mb_label
