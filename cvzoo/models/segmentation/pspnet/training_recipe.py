"""The training recipe of PSPNet (``PSPNet.training_recipe``).

As ChainerCV's ``examples/pspnet/train_multi.py``: MomentumSGD with momentum 0.9,
learning rate 0.01 for 16 images per iteration (8 GPUs of 2), weight decay 1e-4, the
"poly" schedule (power 0.9) over 90,000 iterations (its Cityscapes run; 150,000 on
ADE20K), and the loss of :class:`PSPNetTrainChain`: the main head's cross entropy plus
0.4 times the auxiliary head's on ``res4`` (Zhao et al. 2017). The recipe states the
numbers for one process of 2 images (rate 0.00125), which ``cvzoo.training.train``
multiplies by the number of processes. Its augmentation is ChainerCV's: as PSPNet
predicts in windows of its ``input_size`` over the image at its own scale, the image is
scaled by a factor drawn from [0.5, 2], padded (labels -1) and cropped to
``input_size`` at random, and flipped left-right with probability 1/2 (without
augmentation: cropped at the centre; :class:`~cvzoo.models.segmentation.
training_recipe.SegmentationTransform`).

Differences from ChainerCV: no random rotation of +-10 degrees, no 10x gradient on the
heads, and batch normalisation with each process's own statistics (ChainerCV
synchronises it over the processes).
"""

from cvzoo.core.training.recipe import COMMON_HYPER_KEYS, TrainingRecipe, check_hyper
from cvzoo.models.segmentation import training_recipe as segmentation
from cvzoo.models.segmentation.pspnet.pspnet_train_chain import PSPNetTrainChain

LR = 0.01 * 2 / 16
BATCHSIZE = 2
WEIGHT_DECAY = 1e-4
ITERATIONS = 90000
LOSS_KEYS = ('main/loss', 'main/main_loss', 'main/aux_loss')


def pspnet_recipe(model, **hyper):
    """The recipe of ``model`` (a PSPNet).

    Args:
        model: the PSPNet.
        **hyper: ``seed=0`` (of the augmentation's generator), ``augment=True`` (False:
            only the resize to the input size and ``model.prepare``).

    Raises:
        cvzoo.errors.UsageError: an unknown hyper key, naming it.
    """
    check_hyper(hyper, COMMON_HYPER_KEYS)
    return TrainingRecipe(
        train_chain=PSPNetTrainChain(model, ignore_label=segmentation.IGNORE_LABEL),
        transform=segmentation.SegmentationTransform(
            model, hyper.get('augment', True), hyper.get('seed', 0),
            crop_size=model.input_size),
        converter=segmentation.converter_of(model), lr=LR,
        batchsize=BATCHSIZE, weight_decay=WEIGHT_DECAY, iterations=ITERATIONS,
        schedule='poly', loss_keys=LOSS_KEYS)
