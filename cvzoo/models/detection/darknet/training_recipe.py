"""darknet_training_recipe: how a DarknetDetector (YOLOv2, YOLOv3, Yolo-Fastest) trains.

The reference is Darknet's own VOC training (``cfg/yolov3-voc.cfg``, which
``scripts/train_yolo.py`` follows): momentum SGD (0.9) at lr 1e-3 for 64 images per
iteration (Darknet's rate does not change with the batch: no linear scaling), weight
decay 5e-4, 50,200 iterations, the rate x0.1 at 40,000 and 45,000, after a warm-up
(``burn_in``) over the first 1,000 iterations. Darknet's warm-up rises as
``(i / 1000) ** 4``; here it rises linearly from 0.

The augmentation is Darknet's (``YOLOTransform`` of
:mod:`~cvzoo.models.detection.darknet.augmentation`: crop jitter, stretch to the network
input, flip, colour distortion); the transform gives the boxes in the model's box
convention, and :func:`~cvzoo.core.training.convert.images_and_padded_boxes` stacks the
images and pads the boxes and labels of each image to ``max_boxes`` rows (zero boxes,
label -1), as ``YOLOTrainChain`` takes them: every batch has the same shapes, so a
training step can be one CUDA graph (``--cuda-graph``), target assignment included. A
batch with an image of more boxes is padded to that image's count instead (no box is
dropped); its shapes differ, and it runs eagerly.

Hyper-parameters: ``seed`` (0) and ``augment`` (True), as every recipe; ``jitter`` (0.2,
``scripts/train_yolo.py``'s default; Darknet's VOC cfgs use 0.3), the largest move of a
crop side; ``min_size`` (1), boxes thinner than this (network pixels) are dropped;
``max_boxes`` (90, the default ``max`` of Darknet's ``[yolo]`` layer: the truths it
reads per image), the box rows of every batch.
"""

import fractions
import functools
import numbers

from cvzoo import errors
from cvzoo.core.training import convert, recipe
from cvzoo.models.detection.darknet import augmentation, train_chain

HYPER = {'seed': 0, 'augment': True, 'jitter': 0.2, 'min_size': 1.0, 'max_boxes': 90}
LOSS_KEYS = ('main/loss', 'main/loss/xy', 'main/loss/wh', 'main/loss/obj', 'main/loss/cls')
ITERATIONS = 50200
LR_STEPS = (fractions.Fraction(40000, ITERATIONS), fractions.Fraction(45000, ITERATIONS))


def darknet_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a DarknetDetector.

    Args:
        model (DarknetDetector): the detector (its input size and box convention).
        **hyper: ``seed``, ``augment``, ``jitter``, ``min_size``, ``max_boxes`` (see the
            module docstring).

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter, or ``max_boxes`` not an
            int >= 1.
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, HYPER)
    max_boxes = hyper['max_boxes']
    if (not isinstance(max_boxes, numbers.Integral) or isinstance(max_boxes, bool)
            or max_boxes < 1):
        raise errors.UsageError(
            f'training_recipe: max_boxes: expected an int >= 1, got {max_boxes!r}')
    transform = augmentation.YOLOTransform(
        model.insize, jitter=hyper['jitter'], min_size=hyper['min_size'], seed=hyper['seed'],
        box_convention=model.box_convention, augment=hyper['augment'])
    return recipe.TrainingRecipe(
        train_chain=train_chain.YOLOTrainChain(model), transform=transform,
        converter=functools.partial(convert.images_and_padded_boxes, n_box=int(max_boxes),
                                    n_class=model.n_fg_class),
        optimizer='momentum_sgd', lr=1e-3, batchsize=64, scale_lr=False, momentum=0.9,
        weight_decay=5e-4, iterations=ITERATIONS,
        schedule='multistep', lr_steps=LR_STEPS, warmup_iterations=1000,
        warmup_start_ratio=0.0, loss_keys=LOSS_KEYS)
