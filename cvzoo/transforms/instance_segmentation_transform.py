"""MaskRCNNTransform: the training augmentation of Mask R-CNN (ChainerCV's examples/fpn).

An example ``img, mask, label`` (with ``crowded`` flags after them, as COCO-format
datasets give them) becomes what ``MaskRCNNTrainChain`` takes: crowd regions and empty
masks are dropped, the image is resized as predict() does (``model.prepare``), the
masks with it (nearest neighbour), each box is the tightest one around its mask (scaled
from the image's own pixels, so no precision is lost to the resize), and image, boxes
and masks are flipped left-right with probability 1/2.
"""

import numpy

from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.resize_bbox import resize_bbox
from cvzoo.transforms.mask.flip_mask import flip_mask
from cvzoo.transforms.mask.resize_mask import resize_mask
from cvzoo.utils.bbox import mask_to_bbox


def drop_crowded(example):
    """``img, mask, label, crowded, ...`` -> ``img, mask, label`` without the crowd regions.

    An example of only ``img, mask, label`` is returned as it is.

    >>> mask, label = numpy.ones((2, 3, 4), bool), numpy.array([0, 1])
    >>> _, mask, label = drop_crowded((None, mask, label, numpy.array([False, True])))
    >>> mask.shape, label.tolist()
    ((1, 3, 4), [0])
    """
    img, mask, label = example[:3]
    if len(example) == 3:
        return img, mask, label
    keep = ~numpy.asarray(example[3], bool)
    return img, mask[keep], label[keep]


class MaskRCNNTransform:
    """``img, mask, label[, crowded, ...]`` -> ``x, bbox, label, mask, size``.

    Args:
        model: the instance segmenter being trained; its ``prepare(img)`` resizes the
            image and subtracts the mean, exactly as its predict() does.
        seed (int): of the flip draws.
        augment (bool): flip at random; False keeps only the resize.

    Returns of ``__call__``:

        x      (3, H', W') float32  the prepared image (not padded)
        bbox   (R, 4) float32       (x_min, y_min, x_max, y_max) in pixels of x
        label  (R,) int32
        mask   (R, H', W') bool     the masks at x's size
        size   (H', W')             x's size, which the train chain needs after padding

    Raises:
        ValueError: masks whose count differs from the labels', or whose size is not
            the image's (the message names ``mask``).
    """

    def __init__(self, model, seed=0, augment=True):
        self.model, self.rng = model, numpy.random.RandomState(seed)
        self.augment = augment

    def __call__(self, in_data):
        img, mask, label = drop_crowded(tuple(in_data))
        if mask.ndim != 3 or mask.shape[1:] != img.shape[1:] or len(mask) != len(label):
            raise ValueError(f'mask: expected ({len(label)}, {img.shape[1]}, {img.shape[2]}) '
                             f'(one mask per label, at the image size), got {mask.shape}')
        bbox = mask_to_bbox(mask)
        keep = (bbox[:, 2] > bbox[:, 0]) & (bbox[:, 3] > bbox[:, 1])
        mask, label = mask[keep], numpy.asarray(label, numpy.int32)[keep]
        x = self.model.prepare(img)
        size = x.shape[1:]
        bbox = resize_bbox(bbox[keep], img.shape[1:], size)
        mask = resize_mask(mask, size)
        if self.augment and self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = flip_bbox(bbox, size, x_flip=True)
            mask = flip_mask(mask, x_flip=True)
        return (numpy.ascontiguousarray(x), bbox.astype(numpy.float32), label,
                numpy.ascontiguousarray(mask), size)
