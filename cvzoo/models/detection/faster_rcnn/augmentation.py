"""FasterRCNNTransform: the training augmentation of Faster R-CNN (ChainerCV's examples).

One image per iteration, as ChainerCV's ``examples/faster_rcnn/train.py`` Transform: the
image resized as predict() does (``model.prepare``), the boxes resized with it, then a
horizontal flip with probability 1/2.
"""

import numpy

from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.resize_bbox import resize_bbox


class FasterRCNNTransform:
    """(img, bbox, label) -> the train chain's ``(x, bbox, label, scale or size)``.

    Args:
        model (FasterRCNN): the model being trained; its ``prepare`` resizes and
            subtracts the mean, its ``pad_batch`` pads to ``pad_stride`` (FPN).
        seed (int): of the flip draws.

    Returns of ``__call__``: ``x`` (3, H', W') float32, ``bbox`` (R, 4) float32 in pixels
    of x, ``label`` (R,) int32, and the image's (H, W) after resizing (a model with a
    ``pad_stride``, the FPN train chain) or the resize scale (the VGG16 train chain).
    """

    def __init__(self, model, seed=0):
        self.model, self.rng = model, numpy.random.RandomState(seed)

    def __call__(self, in_data):
        img, bbox, label = in_data
        x = self.model.prepare(img)
        bbox = resize_bbox(bbox, img.shape[1:], x.shape[1:])
        if self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = flip_bbox(bbox, x.shape[1:], x_flip=True)
        size = x.shape[1:]
        x = self.model.pad_batch([numpy.ascontiguousarray(x)])[0]
        extra = size if self.model.pad_stride else x.shape[2] / img.shape[2]
        return x, bbox.astype(numpy.float32), label, extra
