"""SSDTransform: the training augmentation of SSD, ending with the multibox targets.

Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 2.2 "Data
augmentation" and section 3.6, in the order of ChainerCV's ``train.py`` Transform:

1. photometric distortion (brightness, contrast, saturation, hue);
2. with probability 1/2, random expansion (zoom out) up to 4x on a canvas of the mean;
3. a random crop whose IoU with the boxes meets a drawn constraint; boxes whose centre
   leaves the crop are dropped;
4. resize to the network input with a randomly chosen interpolation;
5. random horizontal flip;
6. mean subtraction and the encoding of the boxes to per-anchor targets (matched to the
   continuous boxes, regressing to the boxes in the model's box convention), once,
   here: the train chain takes them as they are.
"""

import copy

import numpy

from cvzoo import transforms
from cvzoo.models.detection.box_convention import to_box_convention

INTERPOLATIONS = ('nearest', 'bilinear', 'bicubic', 'lanczos')


def resize_with_random_interpolation(img, size, random_state=None):
    """Resize ``img`` (C, H, W) to ``size`` (H, W) with an interpolation drawn at random
    (from ``random_state``, None: NumPy's global generator)."""
    rng = numpy.random if random_state is None else random_state
    interpolation = INTERPOLATIONS[rng.randint(len(INTERPOLATIONS))]
    return transforms.resize(img, size, interpolation=interpolation)


class SSDTransform:
    """Turn a detection example into an SSD training example.

    Args:
        coder (MultiboxCoder): the model's coder (copied to the host).
        insize (int): side of the network input.
        mean (array): (3, 1, 1) float32 RGB mean, as the model's ``mean``.
        max_expand_ratio (float): largest zoom-out factor (4 in the paper).
        box_convention (str): the model's ``box_convention``: the positive anchors'
            targets encode the boxes in it, after they are resized to the network input
            (an inclusive box ends one input pixel earlier, see
            :func:`~cvzoo.models.detection.box_convention.to_box_convention`); the
            anchors are matched to the continuous boxes.
        seed (int or None): of this transform's own generator.
        augment (bool): False keeps only the model's preparation (resize, mean, encoding).

    Called with ``(img, bbox, label)`` (img (3, H, W) float32 RGB in [0, 255], bbox
    (R, 4) x-first in pixels, continuous, label (R,) int32; further fields are dropped),
    it returns ``(img, mb_loc, mb_label)``: (3, insize, insize) float32 mean subtracted,
    (K, 4) float32, (K,) int32, the targets ``SSDTrainChain`` takes as they are.

    In training it maps a dataset: ``TransformDataset(train, SSDTransform(model.coder,
    model.insize, model.mean, box_convention=model.box_convention))``.

    >>> from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
    >>> model = SSDTiny(n_fg_class=3)
    >>> transform = SSDTransform(model.coder, model.insize, model.mean)
    >>> img = numpy.full((3, 80, 100), 128, numpy.float32)
    >>> bbox = numpy.array([[10, 10, 60, 50]], numpy.float32)
    >>> img, mb_loc, mb_label = transform((img, bbox, numpy.array([2], numpy.int32)))
    >>> img.shape, mb_loc.shape, mb_label.shape, mb_label.dtype
    ((3, 96, 96), (772, 4), (772,), dtype('int32'))
    """

    def __init__(self, coder, insize, mean, max_expand_ratio=4, *,
                 box_convention='continuous', seed=None, augment=True):
        self.coder = copy.deepcopy(coder).to_device('cpu')
        self.insize = insize
        self.mean = numpy.asarray(mean, numpy.float32).reshape(-1, 1, 1)
        self.max_expand_ratio = max_expand_ratio
        self.box_convention = box_convention
        self.rng = numpy.random.RandomState(seed)
        self.augment = augment

    def __call__(self, in_data):
        img, bbox, label = in_data[:3]
        img = numpy.asarray(img, numpy.float32)
        bbox = numpy.asarray(bbox, numpy.float32).reshape(-1, 4)
        label = numpy.asarray(label, numpy.int32).reshape(-1)
        size = (self.insize, self.insize)
        if self.augment:
            img, bbox, label = self._augment(img, bbox, label)
        else:
            in_size = img.shape[1:]
            img = transforms.resize(img, size)
            bbox = transforms.resize_bbox(bbox, in_size, size)
        # NOTE: the anchors are matched to the continuous boxes, and regress to the boxes
        # in the model's convention (a pixel shorter when inclusive)
        mb_loc, mb_label = self.coder.encode(
            bbox, label, loc_bbox=to_box_convention(bbox, self.box_convention))
        return (img - self.mean).astype(numpy.float32), mb_loc, mb_label

    def _augment(self, img, bbox, label):
        """Distortion, zoom-out, constrained crop, resize and flip (the module's 1-5)."""
        rng = self.rng
        img = transforms.random_distort(img, random_state=rng)
        if self.max_expand_ratio > 1 and rng.randint(2):
            img, param = transforms.random_expand(img, self.max_expand_ratio,
                                                  fill=self.mean.ravel(), return_param=True,
                                                  random_state=rng)
            bbox = transforms.translate_bbox(bbox, param['y_offset'], param['x_offset'])
        img, param = transforms.random_crop_with_bbox_constraints(
            img, bbox, return_param=True, random_state=rng)
        bbox, param = transforms.crop_bbox(bbox, param['y_slice'], param['x_slice'],
                                           allow_outside_center=False, return_param=True)
        label = label[param['index']]
        size = (self.insize, self.insize)
        in_size = img.shape[1:]
        img = resize_with_random_interpolation(img, size, rng)
        bbox = transforms.resize_bbox(bbox, in_size, size)
        img, param = transforms.random_flip(img, x_random=True, return_param=True,
                                            random_state=rng)
        bbox = transforms.flip_bbox(bbox, size, x_flip=param['x_flip'])
        return img, bbox, label
