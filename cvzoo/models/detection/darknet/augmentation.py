"""YOLOTransform: Darknet-style training augmentation of a DarknetDetector (YOLO).

As Darknet's ``load_data_detection`` (data.c): a random crop whose four sides move by up
to ``jitter`` times the image's size (outwards too, the outside filled with grey),
stretched to the network input, a horizontal flip with probability 1/2, and a colour
distortion (``cvzoo.transforms.random_distort``: brightness, contrast, saturation, hue;
Darknet distorts hue, saturation and exposure in HSV). Boxes follow the crop and the
flip, are clipped to it, and boxes left smaller than ``min_size`` pixels are dropped;
the rest are given in the model's box convention, once, here (``YOLOTrainChain`` takes
them as they are). Batches of its examples are made by
:func:`cvzoo.core.training.convert.images_and_padded_boxes` (boxes and labels padded to
fixed shapes).
"""

import numpy

from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.models.detection.darknet import darknet_resize
from cvzoo.transforms.image import random_distort


class YOLOTransform:
    """(img, bbox, label) -> (x, bbox, label) for ``YOLOTrainChain``.

    Args:
        insize (tuple of int): (H, W) of the network input.
        jitter (float): the largest move of each crop side, as a fraction of the image.
        min_size (float): boxes thinner than this (network pixels) after the crop are
            dropped.
        seed (int or None): of this transform's own generator (crop, flip, colours).
        box_convention (str): the model's ``box_convention``; the boxes are given in it,
            in pixels of x (an inclusive box ends one network pixel earlier).
        augment (bool): False: only stretched to the network input, no crop, flip or
            colour change.

    Called with ``(img, bbox, label)`` (img (3, H, W) float32 RGB in [0, 255], bbox
    (R, 4) continuous, label (R,); further fields are dropped). Returns of
    ``__call__``: ``x`` (3, H, W) float32 in [0, 1], ``bbox`` (R', 4) float32
    (x_min, y_min, x_max, y_max) in pixels of x, in ``box_convention``, ``label`` (R',)
    int32.
    """

    def __init__(self, insize, jitter=0.2, min_size=1.0, seed=None, *,
                 box_convention='continuous', augment=True):
        self.insize = tuple(insize)
        self.jitter = jitter if augment else 0.0
        self.min_size = min_size
        self.rng = numpy.random.RandomState(seed)
        self.box_convention = box_convention
        self.augment = augment

    def __call__(self, in_data):
        img, bbox, label = in_data[:3]
        img = numpy.asarray(img, numpy.float32)
        if self.augment:
            img = random_distort.random_distort(img, random_state=self.rng)
        _, H, W = img.shape
        dx, dy = self.jitter * W, self.jitter * H
        left, right = self.rng.uniform(-dx, dx, 2) if dx else (0.0, 0.0)
        top, bottom = self.rng.uniform(-dy, dy, 2) if dy else (0.0, 0.0)
        window = numpy.round([left, top, W - right, H - bottom])
        x = _crop_or_pad(img, window.astype(int)) / numpy.float32(255)
        x = darknet_resize.darknet_resize(x, self.insize)
        scale = numpy.array([self.insize[1], self.insize[0]]) / (window[2:] - window[:2])
        bbox = (numpy.asarray(bbox, numpy.float64).reshape(-1, 4) - numpy.tile(
            window[:2], 2)) * numpy.tile(scale, 2)
        bbox = numpy.clip(bbox, 0, [self.insize[1], self.insize[0]] * 2)
        if self.augment and self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = numpy.stack([self.insize[1] - bbox[:, 2], bbox[:, 1],
                                self.insize[1] - bbox[:, 0], bbox[:, 3]], axis=1)
        keep = ((bbox[:, 2:] - bbox[:, :2]) >= self.min_size).all(axis=1)
        bbox = to_box_convention(bbox[keep].astype(numpy.float32), self.box_convention)
        return (numpy.ascontiguousarray(x, numpy.float32), bbox,
                numpy.asarray(label, numpy.int32).reshape(-1)[keep])


def _crop_or_pad(img, window):
    """The (x_min, y_min, x_max, y_max) integer window of img, grey 127.5 outside it."""
    left, top, right, bottom = window
    out = numpy.full((img.shape[0], bottom - top, right - left), 127.5, numpy.float32)
    src_x = slice(max(left, 0), min(right, img.shape[2]))
    src_y = slice(max(top, 0), min(bottom, img.shape[1]))
    out[:, src_y.start - top:src_y.stop - top, src_x.start - left:src_x.stop - left] = \
        img[:, src_y, src_x]
    return out
