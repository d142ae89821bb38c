"""How the Faster R-CNNs train: ChainerCV's VGG16 and FPN, torchvision's FPN (v1, v2).

Every one takes its examples through
:class:`~cvzoo.models.detection.resize_flip_transform.ResizeFlipTransform` (resized as
predict() does, flipped with probability 1/2, padded for an FPN, boxes in the model's
box convention) and batches them with
:func:`~cvzoo.core.training.convert.images_and_target_lists`.

- :func:`faster_rcnn_vgg16_training_recipe`: ChainerCV's ``examples/faster_rcnn``
  (VOC07 trainval): one image per iteration, MomentumSGD (0.9) at lr 1e-3, weight decay
  5e-4, 70,000 iterations, the rate x0.1 at 50,000. Hyper-parameters ``rpn_sigma`` (3)
  and ``roi_sigma`` (1) of the smooth L1 losses.
- :func:`faster_rcnn_fpn_training_recipe`: ChainerCV's ``examples/fpn`` (COCO,
  ``train_multi.py``): 16 images per iteration, MomentumSGD (0.9) at lr 0.02, weight
  decay 1e-4, 90,000 iterations, the rate x0.1 at 60,000 and 80,000, after a linear
  warm-up over 500 iterations from 1/3 of the rate; the ResNet's ``conv1``, ``res2``
  and every batch normalisation are not updated.
- :func:`torchvision_faster_rcnn_training_recipe`: torchvision's
  ``references/detection`` for ``fasterrcnn_resnet50_fpn``: SGD (0.9) at lr 0.02 for
  16 images, weight decay 1e-4, 26 epochs with the rate x0.1 at epochs 16 and 22, a
  warm-up over 1,000 iterations from 0.001 of the rate
  (:mod:`~cvzoo.models.detection.torchvision_schedule`); the backbone's frozen stages
  are the model's own (``trainable_backbone_layers``). The v2 model takes the same
  recipe. Hyper-parameters ``rpn_n_sample`` (256) and ``roi_n_sample`` (512).

All take ``seed`` (0) and ``augment`` (True), as every recipe.
"""

import fractions

import cvzoo.core.links as L
from cvzoo.core.training import convert, recipe
from cvzoo.models.detection import resize_flip_transform, torchvision_schedule
from cvzoo.models.detection.faster_rcnn import torchvision_train_chain, train_chain

LOSS_PARTS = {'vgg16': ('rpn_loc', 'rpn_cls', 'roi_loc', 'roi_cls'),
              'fpn': ('rpn_loc', 'rpn_conf', 'head_loc', 'head_conf')}


def _loss_keys(parts):
    return ('main/loss',) + tuple(f'main/loss/{part}' for part in parts)


def faster_rcnn_vgg16_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a :class:`FasterRCNN`
    without an FPN (FasterRCNNVGG16); see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, {
        'seed': 0, 'augment': True, 'rpn_sigma': 3.0, 'roi_sigma': 1.0})
    return recipe.TrainingRecipe(
        train_chain=train_chain.FasterRCNNTrainChain(model, hyper['rpn_sigma'],
                                                     hyper['roi_sigma']),
        transform=resize_flip_transform.ResizeFlipTransform(
            model, hyper['seed'], augment=hyper['augment'], extra='scale'),
        converter=convert.images_and_target_lists, optimizer='momentum_sgd', lr=1e-3,
        batchsize=1, momentum=0.9, weight_decay=5e-4, iterations=70000,
        schedule='multistep', lr_steps=(fractions.Fraction(5, 7),),
        loss_keys=_loss_keys(LOSS_PARTS['vgg16']))


def freeze_fpn_resnet_stem(chain):
    """Leave ``conv1``, ``res2`` and the batch normalisations of the ResNet of
    ``chain.model`` out of the updates, as ChainerCV's ``examples/fpn``."""
    base = chain.model.extractor.base
    base.conv1.disable_update()
    base.res2.disable_update()
    for link in chain.model.links():
        if isinstance(link, L.BatchNormalization):
            link.disable_update()


def faster_rcnn_fpn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a
    :class:`FasterRCNNFPNResNet` (ChainerCV's); see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, {'seed': 0, 'augment': True})
    return recipe.TrainingRecipe(
        train_chain=train_chain.FasterRCNNFPNTrainChain(model),
        transform=resize_flip_transform.ResizeFlipTransform(
            model, hyper['seed'], augment=hyper['augment'], extra='size'),
        converter=convert.images_and_target_lists, optimizer='momentum_sgd', lr=0.02,
        batchsize=16, momentum=0.9, weight_decay=1e-4, iterations=90000,
        schedule='multistep', lr_steps=(fractions.Fraction(2, 3), fractions.Fraction(8, 9)),
        warmup_iterations=500, warmup_start_ratio=1 / 3,
        loss_keys=_loss_keys(LOSS_PARTS['fpn']), freeze=freeze_fpn_resnet_stem)


def torchvision_faster_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of torchvision's
    :class:`FasterRCNNResNet50FPN` (v1 and v2); see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, {
        'seed': 0, 'augment': True, 'rpn_n_sample': 256, 'roi_n_sample': 512})
    chain = torchvision_train_chain.FasterRCNNResNet50FPNTrainChain(
        model, rpn_n_sample=hyper['rpn_n_sample'], roi_n_sample=hyper['roi_n_sample'])
    return recipe.TrainingRecipe(
        train_chain=chain,
        transform=resize_flip_transform.ResizeFlipTransform(
            model, hyper['seed'], augment=hyper['augment'], extra='size'),
        converter=convert.images_and_target_lists, loss_keys=_loss_keys(LOSS_PARTS['fpn']),
        **torchvision_schedule.torchvision_schedule(0.02, 16, 26, (16, 22), 1e-4))
