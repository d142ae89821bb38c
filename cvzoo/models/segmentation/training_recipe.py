"""The training recipe of semantic segmenters (``SegmentationModel.training_recipe``).

The numbers are those of torchvision's segmentation reference
(``references/segmentation``): MomentumSGD with momentum 0.9, learning rate 0.02 for
32 images per iteration (8 GPUs of 4; scaled linearly with the batch), weight decay
1e-4 and the "poly" schedule, ``lr * (1 - t / T) ** 0.9``, without warm-up. The recipe
states them for one process of 4 images (rate 0.0025); ``cvzoo.training.train`` under
a communicator of 8 processes multiplies the rate by 8, the reference run. The length,
90,000 iterations, is ChainerCV's PSPNet run on Cityscapes (torchvision counts 30
epochs of its COCO subset). The loss is :class:`SegmentationTrainChain`'s pixel-wise
softmax cross entropy, pixels labelled -1 ignored.

The augmentation of PSPNet, DeepLab and ChainerCV's examples: each image (and its label
map, by nearest neighbour) is first brought to the size the model's predict() gives
the network (``model.input_size``), then scaled by a factor drawn from [0.5, 2],
padded (labels -1) and cropped back to that size, and flipped left-right with
probability 1/2 (:class:`~cvzoo.models.segmentation.augmentation.
SegmentationAugmentation`); ``model.prepare`` standardises it as predict() does.
"""

import functools

import numpy

from cvzoo.core.training import convert
from cvzoo.core.training.recipe import COMMON_HYPER_KEYS, TrainingRecipe, check_hyper
from cvzoo.models.segmentation.augmentation import SegmentationAugmentation, pad_pair, resize_label
from cvzoo.models.segmentation.segmentation_train_chain import SegmentationTrainChain

LR = 0.02 * 4 / 32
BATCHSIZE = 4
WEIGHT_DECAY = 1e-4
ITERATIONS = 90000
SCALE_RANGE = (0.5, 2.0)
IGNORE_LABEL = -1


def segmentation_recipe(model, **hyper):
    """The recipe of ``model`` (a SegmentationModel).

    Args:
        model: the segmenter.
        **hyper: ``seed=0`` (of the augmentation's generator), ``augment=True`` (False:
            only the resize to the network's input size and ``model.prepare``).

    Raises:
        cvzoo.errors.UsageError: an unknown hyper key, naming it.
    """
    check_hyper(hyper, COMMON_HYPER_KEYS)
    return TrainingRecipe(
        train_chain=SegmentationTrainChain(model, ignore_label=IGNORE_LABEL),
        transform=SegmentationTransform(model, hyper.get('augment', True),
                                        hyper.get('seed', 0)),
        converter=converter_of(model), lr=LR, batchsize=BATCHSIZE,
        weight_decay=WEIGHT_DECAY, iterations=ITERATIONS, schedule='poly')


def converter_of(model):
    """Batches of one size for a model that resizes its inputs; otherwise images padded
    with 0 (the mean, once standardised) and labels with -1 (ignored)."""
    if model.resize_input:
        return convert.concat_examples
    return functools.partial(convert.concat_examples, padding=(0.0, IGNORE_LABEL))


class SegmentationTransform:
    """``img, label`` -> ``model.prepare(img), label`` at the network's input size.

    Args:
        model: the segmenter (``input_size``, ``prepare``, ``preset``).
        augment (bool): the random scale, crop and flip of the module docstring.
        seed (int): of the transform's own generator (``rng``).
        crop_size (tuple of int or None): for a model that sees images at their own
            scale in windows of this (H, W) size (PSPNet): the images are not resized
            but cropped to it (at random when augmenting, else at the centre; padded
            when smaller). None: resized to ``model.input_size(img)`` first.
    """

    def __init__(self, model, augment=True, seed=0, crop_size=None):
        self.model = model
        self.crop_size = None if crop_size is None else tuple(crop_size)
        self.pad_value = float(numpy.mean(model.preset.mean))  # about 0 once standardised
        self.augmentation = None
        self.rng = numpy.random.RandomState(seed)
        if augment:
            self.augmentation = SegmentationAugmentation(
                self.crop_size, SCALE_RANGE, ignore_label=IGNORE_LABEL,
                pad_value=self.pad_value, seed=seed)
            self.rng = self.augmentation.rng

    def __call__(self, example):
        img, label = example[:2]
        img = numpy.asarray(img, numpy.float32)
        if self.crop_size is None:
            size = self.model.input_size(img)
            if img.shape[1:] != size:
                img = self.model._resize(img, size)
                label = resize_label(label, size)
        if self.augmentation is not None:
            img, label = self.augmentation((img, label))
        elif self.crop_size is not None:
            img, label = self._center_crop(img, label)
        return self.model.prepare(img), numpy.asarray(label, numpy.int32)

    def _center_crop(self, img, label):
        img, label = pad_pair(img, label, self.crop_size, self.pad_value, IGNORE_LABEL)
        H, W = img.shape[1:]
        top, left = (H - self.crop_size[0]) // 2, (W - self.crop_size[1]) // 2
        y = slice(top, top + self.crop_size[0])
        x = slice(left, left + self.crop_size[1])
        return img[:, y, x], label[y, x]
