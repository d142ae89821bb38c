"""torchvision_schedule: the optimizer and schedule of torchvision's ``references/detection``.

torchvision's detection references train on COCO train2017 (the 117,266 images that have
boxes: ``_coco_remove_images_without_annotations``) with SGD (momentum 0.9), a linear
warm-up over the first 1,000 iterations from 0.001 times the rate, and the rate x0.1 at
the epochs given by ``--lr-steps``. The recipes of the torchvision detectors (SSD300VGG16,
Faster R-CNN FPN v1 and v2, RetinaNet) take their numbers from :func:`torchvision_schedule`.
"""

import fractions

COCO_TRAIN_IMAGES = 117266
WARMUP_ITERATIONS = 1000
WARMUP_START_RATIO = 1e-3


def torchvision_schedule(lr, batchsize, epochs, step_epochs, weight_decay):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` fields of a torchvision
    reference run.

    Args:
        lr (float): ``--lr`` (for ``batchsize`` images per iteration).
        batchsize (int): images per iteration over all GPUs (8 x ``--batch-size``).
        epochs (int): ``--epochs``.
        step_epochs (sequence of int): ``--lr-steps``.
        weight_decay (float): ``--weight-decay``.

    Returns:
        dict: ``optimizer``, ``lr``, ``batchsize``, ``momentum``, ``weight_decay``,
        ``iterations``, ``schedule``, ``lr_steps``, ``warmup_iterations``,
        ``warmup_start_ratio``.

    >>> schedule = torchvision_schedule(0.02, 16, 26, (16, 22), 1e-4)
    >>> schedule['iterations'], [str(step) for step in schedule['lr_steps']]
    (190580, ['8/13', '11/13'])
    """
    per_epoch = -(-COCO_TRAIN_IMAGES // batchsize)
    return {'optimizer': 'momentum_sgd', 'lr': lr, 'batchsize': batchsize, 'momentum': 0.9,
            'weight_decay': weight_decay, 'iterations': epochs * per_epoch,
            'schedule': 'multistep',
            'lr_steps': tuple(fractions.Fraction(step, epochs) for step in step_epochs),
            'warmup_iterations': WARMUP_ITERATIONS, 'warmup_start_ratio': WARMUP_START_RATIO}
