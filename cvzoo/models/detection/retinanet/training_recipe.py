"""retinanet_training_recipe: how RetinaNet trains (``RetinaNetResNet50FPN.training_recipe``).

torchvision's ``references/detection`` for ``retinanet_resnet50_fpn``: SGD (momentum
0.9) at lr 0.01 for 16 images per iteration (8 GPUs x 2), weight decay 1e-4, 26 epochs
of COCO train2017 with the rate x0.1 at epochs 16 and 22, after a linear warm-up over
1,000 iterations from 0.001 of the rate
(:mod:`~cvzoo.models.detection.torchvision_schedule`). Examples go through
:class:`~cvzoo.models.detection.resize_flip_transform.ResizeFlipTransform` (resized as
predict() does, flipped with probability 1/2, padded, boxes in the model's box
convention), batched by :func:`~cvzoo.core.training.convert.images_and_target_lists`.
The backbone's frozen stages are the model's own (``trainable_backbone_layers``).

Hyper-parameters: ``seed`` (0) and ``augment`` (True), as every recipe;
``smooth_l1_beta`` (None: torchvision's L1 box loss).
"""

from cvzoo.core.training import convert, recipe
from cvzoo.models.detection import resize_flip_transform, torchvision_schedule
from cvzoo.models.detection.retinanet import train_chain

HYPER = {'seed': 0, 'augment': True, 'smooth_l1_beta': None}
LOSS_KEYS = ('main/loss', 'main/loss/loc', 'main/loss/conf')


def retinanet_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a RetinaNet ``model``.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, HYPER)
    return recipe.TrainingRecipe(
        train_chain=train_chain.RetinaNetTrainChain(model,
                                                    smooth_l1_beta=hyper['smooth_l1_beta']),
        transform=resize_flip_transform.ResizeFlipTransform(
            model, hyper['seed'], augment=hyper['augment'], extra=None),
        converter=convert.images_and_target_lists, loss_keys=LOSS_KEYS,
        **torchvision_schedule.torchvision_schedule(0.01, 16, 26, (16, 22), 1e-4))
