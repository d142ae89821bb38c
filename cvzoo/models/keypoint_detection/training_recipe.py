"""How Keypoint R-CNN trains: torchvision's ``references/detection`` for
``keypointrcnn_resnet50_fpn`` (COCO 2017 train, person keypoints).

SGD (momentum 0.9) at lr 0.02 for 16 images (8 GPUs of 2), weight decay 1e-4, 46 epochs
with the rate x0.1 at epochs 36 and 43, a linear warm-up over 1,000 iterations from 0.001
of the rate; the frozen backbone stages are the model's own
(``trainable_backbone_layers``). An epoch is taken as ceil(64,115 / 16) iterations, the
COCO 2017 train images with a person (torchvision keeps those with at least 10 labelled
keypoints, somewhat fewer).

The examples of DESIGN.md's keypoint layout (``img, point, visible, label, bbox``, fields
after them dropped) go through :class:`KeypointRCNNRecipeTransform`: resized as
predict() resizes, flipped left-right with probability 1/2 (torchvision's
``RandomHorizontalFlip``: x becomes W - x and the left and right keypoints swap), boxes
in the model's box convention (applied here, once);
:class:`~cvzoo.core.training.convert.PadImages` batches them (``model.pad_batch``; the
points, visibilities and sizes stay on the host).

Hyper-parameters: ``seed`` (0), ``augment`` (True), ``roi_n_sample`` (512: the RoIs
drawn per image for the box and keypoint heads) and ``flip_indices`` (the keypoint each
keypoint becomes when flipped; default COCO's for 17 keypoints, and no flip for other
counts unless given).

:func:`tiny_keypoint_rcnn_training_recipe` (:class:`~.keypoint_rcnn_tiny.
KeypointRCNNTiny`) is this recipe with ``roi_n_sample`` 64 and cvzoo's own numbers,
measured to learn from random weights on a CPU (docs/training.md, the training proofs;
:func:`~cvzoo.models.detection.tiny_fpn.from_scratch_on_a_cpu`).
"""

import fractions

import numpy

from cvzoo.core.training import convert
from cvzoo.core.training.recipe import TrainingRecipe, settle_hyper
from cvzoo.models.detection import tiny_fpn, torchvision_schedule
from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.models.keypoint_detection import keypoint_rcnn_train_chain
from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.resize_bbox import resize_bbox
from cvzoo.transforms.point.flip_point import flip_point
from cvzoo.transforms.point.resize_point import resize_point

LOSS_KEYS = ('main/loss', 'main/loss/rpn_loc', 'main/loss/rpn_conf', 'main/loss/head_loc',
             'main/loss/head_conf', 'main/loss/keypoint')
# torchvision's flip_inds of the 17 COCO person keypoints (nose, then left/right pairs)
COCO_FLIP_INDICES = (0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15)
EPOCH_ITERATIONS = 4008  # ceil(64,115 / 16)
EPOCHS = 46
LR_STEPS = (fractions.Fraction(36, 46), fractions.Fraction(43, 46))


class KeypointRCNNRecipeTransform:
    """``img, point, visible, label, bbox[, ...]`` -> ``x, bbox, label, point, visible,
    size`` of :class:`~.keypoint_rcnn_train_chain.KeypointRCNNTrainChain`; see the module
    docstring.

    Args:
        model: the keypoint detector (``prepare``, ``box_convention``).
        seed (int): of the flip draws.
        augment (bool): flip at random (when ``flip_indices`` is known).
        flip_indices (sequence of int or None): the keypoint each keypoint becomes when
            flipped; None: no flip.
    """

    def __init__(self, model, seed=0, augment=True, flip_indices=None):
        self.model, self.rng = model, numpy.random.RandomState(seed)
        self.augment = augment
        self.flip_indices = None if flip_indices is None else numpy.asarray(flip_indices)

    def __call__(self, in_data):
        img, point, visible, label, bbox = in_data[:5]
        x = self.model.prepare(img)
        size = x.shape[1:]
        bbox = resize_bbox(numpy.asarray(bbox, numpy.float32), img.shape[1:], size)
        point = resize_point(numpy.asarray(point, numpy.float32), img.shape[1:], size)
        visible = numpy.asarray(visible, bool)
        if self.augment and self.flip_indices is not None and self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = flip_bbox(bbox, size, x_flip=True)
            point = flip_point(point, size, x_flip=True)[:, self.flip_indices]
            visible = visible[:, self.flip_indices]
        bbox = to_box_convention(bbox, getattr(self.model, 'box_convention', 'continuous'))
        return (numpy.ascontiguousarray(x), bbox.astype(numpy.float32),
                numpy.asarray(label, numpy.int32), point.astype(numpy.float32), visible,
                size)


def keypoint_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a
    :class:`~.keypoint_rcnn.KeypointRCNNResNet50FPN`; see the module docstring.

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
        ValueError: ``flip_indices`` that is not a permutation of the model's keypoints.
    """
    hyper = settle_hyper(type(model).__name__, hyper, {
        'seed': 0, 'augment': True, 'roi_n_sample': 512,
        'flip_indices': COCO_FLIP_INDICES if model.n_point == len(COCO_FLIP_INDICES) else None})
    flip_indices = hyper['flip_indices']
    if flip_indices is not None and sorted(flip_indices) != list(range(model.n_point)):
        raise ValueError(f'flip_indices: expected a permutation of 0 ... '
                         f'{model.n_point - 1} (the model has {model.n_point} keypoints), '
                         f'got {flip_indices!r}')
    return TrainingRecipe(
        train_chain=keypoint_rcnn_train_chain.KeypointRCNNTrainChain(
            model, roi_n_sample=hyper.get('roi_n_sample', 512)),
        transform=KeypointRCNNRecipeTransform(model, hyper.get('seed', 0),
                                              hyper.get('augment', True), flip_indices),
        # points (3), visibilities (4) and sizes (5) stay on the host
        converter=convert.PadImages(model.pad_batch, host_fields=(3, 4, 5)),
        optimizer='momentum_sgd', lr=0.02, batchsize=16, momentum=0.9, weight_decay=1e-4,
        iterations=EPOCHS * EPOCH_ITERATIONS, schedule='multistep', lr_steps=LR_STEPS,
        lr_factor=0.1, warmup_iterations=torchvision_schedule.WARMUP_ITERATIONS,
        warmup_start_ratio=torchvision_schedule.WARMUP_START_RATIO,
        loss_keys=LOSS_KEYS)


def tiny_keypoint_rcnn_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of a
    :class:`~.keypoint_rcnn_tiny.KeypointRCNNTiny`: :func:`keypoint_rcnn_training_recipe`
    (its hyper-parameters, ``roi_n_sample`` 64 by default) with cvzoo's own numbers
    (module docstring).

    >>> from cvzoo.models.keypoint_detection.keypoint_rcnn_tiny import KeypointRCNNTiny
    >>> recipe = tiny_keypoint_rcnn_training_recipe(KeypointRCNNTiny(n_point=5))
    >>> recipe.optimizer, recipe.lr, recipe.batchsize, recipe.train_chain.roi_n_sample
    ('adam', 0.002, 4, 64)

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.
        ValueError: ``flip_indices`` that is not a permutation of the model's keypoints.
    """
    return tiny_fpn.from_scratch_on_a_cpu(keypoint_rcnn_training_recipe(
        model, **{'roi_n_sample': tiny_fpn.ROI_N_SAMPLE, **hyper}))
