"""The training recipe of every classifier (``ImageClassifier.training_recipe``).

The numbers are those of torchvision's classification reference
(``references/classification``, the ResNet recipe): MomentumSGD with momentum 0.9,
learning rate 0.1 for 256 images per iteration (8 GPUs of 32; scaled linearly with the
batch), weight decay 1e-4, 90 epochs of ImageNet with the rate multiplied by 0.1 at
epochs 30 and 60, no warm-up. The recipe states them for one process of 32 images
(rate 0.0125); ``cvzoo.training.train`` under a communicator of 8 processes
multiplies the rate by 8, which is the reference run. Its augmentation: a random crop
of 8% to 100% of the image's area with an aspect ratio in [3/4, 4/3]
(``RandomResizedCrop``) and a horizontal flip, then the model's own preparation
(``model.prepare``: the resize, crop and standardisation predict() applies).

:class:`~cvzoo.models.classification.small_cnn.small_cnn.SmallCNN` trains as
``scripts/train_classifier.py`` trains it on scikit-learn's digits (97% in 12
epochs): 64 images, rate 0.05, a cosine decay, and a gentler augmentation (crops of
64% to 100% of the area, no flip: digits and icons have a handedness).

The loss is ``L.Classifier``'s softmax cross entropy around the model, which reports
``main/loss`` and ``main/accuracy``.
"""

import dataclasses
import fractions

import numpy

from cvzoo import transforms
from cvzoo.core import links as L
from cvzoo.core.training.recipe import COMMON_HYPER_KEYS, TrainingRecipe, check_hyper

# the reference's 90 ImageNet epochs at 256 images: 90 * ceil(1,281,167 / 256)
IMAGENET_ITERATIONS = 90 * 5005


@dataclasses.dataclass(frozen=True)
class ClassifierNumbers:
    """The optimizer and augmentation numbers of a classifier family's recipe."""

    lr: float
    batchsize: int
    iterations: int
    schedule: str
    crop_area: tuple
    flip: bool
    weight_decay: float = 1e-4
    lr_steps: tuple = ()


IMAGENET = ClassifierNumbers(
    lr=0.1 * 32 / 256, batchsize=32, iterations=IMAGENET_ITERATIONS, schedule='multistep',
    lr_steps=(fractions.Fraction(1, 3), fractions.Fraction(2, 3)), crop_area=(0.08, 1.0),
    flip=True)
SMALL_CNN = ClassifierNumbers(lr=0.05, batchsize=64, iterations=300, schedule='cosine',
                              crop_area=(0.64, 1.0), flip=False)
HYPER_KEYS = COMMON_HYPER_KEYS + ('flip',)


def classifier_recipe(model, numbers=IMAGENET, **hyper):
    """The recipe of ``model`` (an ImageClassifier).

    Args:
        model: the classifier.
        numbers (ClassifierNumbers): :data:`IMAGENET` or a family's own.
        **hyper: ``seed=0`` (of the augmentation's generator), ``augment=True`` (False:
            only ``model.prepare``), ``flip`` (the horizontal flip; default the
            numbers').

    Raises:
        cvzoo.errors.UsageError: an unknown hyper key, naming it.
    """
    check_hyper(hyper, HYPER_KEYS)
    flip = hyper.get('flip', numbers.flip)
    transform = ClassificationTransform(model, numbers.crop_area if hyper.get('augment', True)
                                        else None, flip and hyper.get('augment', True),
                                        seed=hyper.get('seed', 0))
    return TrainingRecipe(
        train_chain=L.Classifier(model), transform=transform, lr=numbers.lr,
        batchsize=numbers.batchsize, weight_decay=numbers.weight_decay,
        iterations=numbers.iterations, schedule=numbers.schedule, lr_steps=numbers.lr_steps,
        loss_keys=('main/loss',))


class ClassificationTransform:
    """``img, label`` -> ``model.prepare(augmented img), label``.

    Args:
        model: the classifier (its ``prepare``).
        crop_area (tuple of float or None): the range of the random crop's share of the
            image's area (aspect ratio in [3/4, 4/3]); None: no crop.
        flip (bool): flip left-right with probability 1/2.
        seed (int): of the transform's own generator (``rng``).
    """

    ASPECT_RATIOS = (3 / 4, 4 / 3)

    def __init__(self, model, crop_area, flip, seed=0):
        self.model = model
        self.crop_area = crop_area
        self.flip = flip
        self.rng = numpy.random.RandomState(seed)

    def __call__(self, example):
        img, label = example[:2]
        img = numpy.asarray(img, numpy.float32)
        if self.crop_area is not None:
            img = self._random_crop(img)
        if self.flip and self.rng.rand() < 0.5:
            img = transforms.flip(img, x_flip=True)
        return self.model.prepare(img), numpy.int32(label)

    def _random_crop(self, img):
        H, W = img.shape[1:]
        area = H * W * self.rng.uniform(*self.crop_area)
        aspect = numpy.exp(self.rng.uniform(*numpy.log(self.ASPECT_RATIOS)))
        out_H = int(min(max(round(numpy.sqrt(area / aspect)), 1), H))
        out_W = int(min(max(round(numpy.sqrt(area * aspect)), 1), W))
        top = self.rng.randint(H - out_H + 1)
        left = self.rng.randint(W - out_W + 1)
        return img[:, top:top + out_H, left:left + out_W]
