"""How the Mask R-CNNs train: ChainerCV's FPN Mask R-CNN and torchvision's (v1, v2).

Both take the instance segmentation examples of DESIGN.md (``img, mask, label``, crowd
flags after them dropped) through :class:`MaskRCNNRecipeTransform`: resized as predict()
resizes, flipped left-right with probability 1/2, each box the tightest around its mask,
in the model's box convention (applied here, once); and batch them with
:class:`~cvzoo.core.training.convert.PadImages` (``model.pad_batch``; the masks and
sizes stay on the host, where the train chains cut their targets).

- :func:`chainercv_mask_rcnn_training_recipe`: ChainerCV's ``examples/fpn``
  (``train_multi.py``, COCO 2017 train): 16 images per iteration, MomentumSGD (0.9) at
  lr 0.02, weight decay 1e-4, 90,000 iterations, the rate x0.1 at 60,000 and 80,000
  (2/3 and 8/9 of the run) after a linear warm-up over 500 iterations from 1/3 of the
  rate; the ResNet's ``conv1``, ``res2`` and every batch normalisation are not updated
  (Faster R-CNN FPN's ``freeze_fpn_resnet_stem``; hyper-parameter ``freeze_backbone``,
  True: ChainerCV starts from ImageNet weights). Hyper-parameter ``roi_n_sample`` (512,
  a quarter foreground at most): the RoIs drawn per image for the box and mask heads.
- :func:`torchvision_mask_rcnn_training_recipe`: torchvision's ``references/detection``
  for ``maskrcnn_resnet50_fpn``: SGD (momentum 0.9) at lr 0.02 for 16 images (8 GPUs of
  2), weight decay 1e-4, 26 epochs of COCO 2017 train (117,266 images with annotations,
  7,330 iterations each) with the rate x0.1 at epochs 16 and 22, a linear warm-up over
  1,000 iterations from 0.001 of the rate (:mod:`~cvzoo.models.detection.
  torchvision_schedule`, as torchvision's Faster R-CNN); the frozen backbone stages are
  the model's own (``trainable_backbone_layers``). The v2 model takes the same recipe
  (torchvision trained its v2 weights longer, with large-scale jitter). Hyper-parameter
  ``roi_n_sample`` (512): the RoIs drawn per image for the box and mask heads.
- :func:`tiny_mask_rcnn_training_recipe` (:class:`~.mask_rcnn_tiny.MaskRCNNTiny`):
  ChainerCV's recipe above with nothing frozen, 64 RoIs per image and cvzoo's own
  numbers, measured to learn from random weights on a CPU (docs/training.md, the
  training proofs; :func:`~cvzoo.models.detection.tiny_fpn.from_scratch_on_a_cpu`).

All take ``seed`` (0) and ``augment`` (True), as every recipe.
"""

import fractions

from cvzoo.core.training import convert
from cvzoo.core.training.recipe import TrainingRecipe, settle_hyper
from cvzoo.models.detection import tiny_fpn, torchvision_schedule
from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.models.detection.faster_rcnn.proposal_target_creator import ProposalTargetCreator
from cvzoo.models.detection.faster_rcnn.training_recipe import freeze_fpn_resnet_stem
from cvzoo.models.instance_segmentation.mask_rcnn import mask_rcnn_train_chain
from cvzoo.transforms.instance_segmentation_transform import MaskRCNNTransform

LOSS_KEYS = ('main/loss', 'main/loss/rpn_loc', 'main/loss/rpn_conf', 'main/loss/head_loc',
             'main/loss/head_conf', 'main/loss/mask')
# ChainerCV's examples/fpn: 90,000 iterations of 16 images, steps at 60,000 and 80,000
CHAINERCV_LR = 0.02
CHAINERCV_BATCHSIZE = 16
CHAINERCV_WEIGHT_DECAY = 1e-4
CHAINERCV_ITERATIONS = 90000
CHAINERCV_LR_STEPS = (fractions.Fraction(2, 3), fractions.Fraction(8, 9))
CHAINERCV_WARMUP = 500
CHAINERCV_WARMUP_START_RATIO = 1 / 3
CHAINERCV_ROI_N_SAMPLE = 512


class MaskRCNNRecipeTransform:
    """``img, mask, label[, crowded, ...]`` -> ``x, bbox, label, mask, size`` of the
    Mask R-CNN train chains: :class:`~cvzoo.transforms.instance_segmentation_transform.
    MaskRCNNTransform`'s resize and flip, then the boxes in ``model.box_convention``
    (:func:`~cvzoo.models.detection.box_convention.to_box_convention`, the one place
    it is applied).

    Args:
        model: the instance segmenter (``prepare``, ``box_convention``).
        seed (int): of the flip draws.
        augment (bool): flip at random.
    """

    def __init__(self, model, seed=0, augment=True):
        self.model = model
        self.resize_flip = MaskRCNNTransform(model, seed, augment)
        self.rng = self.resize_flip.rng

    def __call__(self, in_data):
        x, bbox, label, mask, size = self.resize_flip(in_data)
        bbox = to_box_convention(bbox, getattr(self.model, 'box_convention', 'continuous'))
        return x, bbox, label, mask, size


def padded_batches(model):
    """The converter of the Mask R-CNN chains: :class:`MaskRCNNRecipeTransform`'s
    examples, images padded by ``model.pad_batch``; the masks (3) and sizes (4) stay on
    the host, where the chains cut their targets."""
    return convert.PadImages(model.pad_batch, host_fields=(3, 4))


def chainercv_mask_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a
    :class:`~.mask_rcnn_fpn_resnet.MaskRCNNFPNResNet`; see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = settle_hyper(type(model).__name__, hyper, {
        'seed': 0, 'augment': True, 'freeze_backbone': True,
        'roi_n_sample': CHAINERCV_ROI_N_SAMPLE})
    freeze = hyper['freeze_backbone']
    return TrainingRecipe(
        train_chain=mask_rcnn_train_chain.MaskRCNNTrainChain(
            model, proposal_target_creator=ProposalTargetCreator(
                hyper['roi_n_sample'], 0.25, 0.5, 0.5, 0.0)),
        transform=MaskRCNNRecipeTransform(model, hyper['seed'], hyper['augment']),
        converter=padded_batches(model), optimizer='momentum_sgd', lr=CHAINERCV_LR,
        batchsize=CHAINERCV_BATCHSIZE, momentum=0.9, weight_decay=CHAINERCV_WEIGHT_DECAY,
        iterations=CHAINERCV_ITERATIONS,
        schedule='multistep', lr_steps=CHAINERCV_LR_STEPS, lr_factor=0.1,
        warmup_iterations=CHAINERCV_WARMUP, warmup_start_ratio=CHAINERCV_WARMUP_START_RATIO,
        loss_keys=LOSS_KEYS, freeze=freeze_fpn_resnet_stem if freeze else None)


def torchvision_mask_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of torchvision's Mask
    R-CNNs (:class:`~.torchvision_mask_rcnn.MaskRCNNResNet50FPN` and v2); see the module
    docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = settle_hyper(type(model).__name__, hyper,
                         {'seed': 0, 'augment': True, 'roi_n_sample': 512})
    return TrainingRecipe(
        train_chain=mask_rcnn_train_chain.TorchvisionMaskRCNNTrainChain(
            model, roi_n_sample=hyper.get('roi_n_sample', 512)),
        transform=MaskRCNNRecipeTransform(model, hyper.get('seed', 0),
                                          hyper.get('augment', True)),
        converter=padded_batches(model), loss_keys=LOSS_KEYS,
        **torchvision_schedule.torchvision_schedule(0.02, 16, 26, (16, 22), 1e-4))


def tiny_mask_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a
    :class:`~.mask_rcnn_tiny.MaskRCNNTiny`: :func:`chainercv_mask_rcnn_training_recipe`
    with nothing frozen, ``roi_n_sample`` 64 by default and cvzoo's own numbers (module
    docstring). Hyper-parameters: ``seed``, ``augment`` and ``roi_n_sample``.

    >>> from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_tiny import MaskRCNNTiny
    >>> recipe = tiny_mask_rcnn_training_recipe(MaskRCNNTiny(n_fg_class=3))
    >>> recipe.optimizer, recipe.lr, recipe.batchsize
    ('adam', 0.002, 4)

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
    """
    hyper = settle_hyper(type(model).__name__, hyper, {
        'seed': 0, 'augment': True, 'roi_n_sample': tiny_fpn.ROI_N_SAMPLE})
    return tiny_fpn.from_scratch_on_a_cpu(
        chainercv_mask_rcnn_training_recipe(model, freeze_backbone=False, **hyper))
