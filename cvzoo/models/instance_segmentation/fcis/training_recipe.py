"""How FCIS trains: ChainerCV's ``examples/fcis/train.py`` (SBD train, 5,623 images).

One image per iteration (FCIS trains one image at a time, at its own size), MomentumSGD
(0.9) at lr 1.25e-4, weight decay 5e-4, 44 epochs (247,412 iterations) with the rate
x0.1 after epoch 28. The examples of DESIGN.md's instance segmentation layout (``img,
mask, label``, crowd flags after them dropped) go through :class:`FCISRecipeTransform`:
resized as predict() resizes, flipped left-right with probability 1/2, each box the
tightest around its mask; :func:`~cvzoo.core.training.convert.field_lists` batches them
(images at their own sizes, run one at a time by the train chain and their losses
averaged, as ChainerCV's multi-GPU runs average one image per GPU; the masks and the
scales stay on the host).

Difference from ChainerCV: its head's ``conv1`` learns at three times the rate, which
the recipe's single rate leaves out.

Hyper-parameters: ``seed`` (0) and ``augment`` (True), as every recipe.
"""

import fractions

from cvzoo.core.training import convert
from cvzoo.core.training.recipe import COMMON_HYPER_KEYS, TrainingRecipe, check_hyper
from cvzoo.models.instance_segmentation.fcis import fcis_train_chain
from cvzoo.transforms.instance_segmentation_transform import MaskRCNNTransform

LOSS_KEYS = ('main/loss', 'main/loss/rpn_loc', 'main/loss/rpn_cls', 'main/loss/roi_loc',
             'main/loss/roi_cls', 'main/loss/roi_mask')
SBD_TRAIN_IMAGES = 5623
EPOCHS = 44
COOLDOWN_EPOCH = 28


class FCISRecipeTransform:
    """``img, mask, label[, crowded, ...]`` -> ``x, bbox, label, mask, scale`` of
    :class:`~.fcis_train_chain.FCISTrainChain`: :class:`~cvzoo.transforms.
    instance_segmentation_transform.MaskRCNNTransform`'s resize and flip, and the resize
    factor (input pixels per image pixel). FCIS's boxes are continuous.

    Args:
        model (FCIS): the model (``prepare``).
        seed (int): of the flip draws.
        augment (bool): flip at random.
    """

    def __init__(self, model, seed=0, augment=True):
        self.resize_flip = MaskRCNNTransform(model, seed, augment)
        self.rng = self.resize_flip.rng

    def __call__(self, in_data):
        x, bbox, label, mask, _ = self.resize_flip(in_data)
        return x, bbox, label, mask, x.shape[2] / in_data[0].shape[2]


def fcis_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of an
    :class:`~.fcis.FCIS`; see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    check_hyper(hyper, COMMON_HYPER_KEYS)
    return TrainingRecipe(
        train_chain=fcis_train_chain.FCISTrainChain(model),
        transform=FCISRecipeTransform(model, hyper.get('seed', 0), hyper.get('augment', True)),
        converter=_converter, optimizer='momentum_sgd', lr=1.25e-4, batchsize=1,
        momentum=0.9, weight_decay=5e-4, iterations=EPOCHS * SBD_TRAIN_IMAGES,
        schedule='multistep', lr_steps=(fractions.Fraction(COOLDOWN_EPOCH, EPOCHS),),
        lr_factor=0.1, loss_keys=LOSS_KEYS)


def _converter(batch, device=None):
    # masks (3) and scales (4) stay on the host, as FCISTrainChain reads them there
    return convert.field_lists(batch, device, host_fields=(3, 4))
