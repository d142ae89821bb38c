"""The training of ``scripts/train_mask_rcnn.py``: Mask R-CNN FPN on a COCO-format dataset.

As ChainerCV's ``examples/fpn/train_multi.py`` for Mask R-CNN: MomentumSGD (momentum
0.9), weight decay 1e-4, the learning rate multiplied by 0.1 at 2/3 and at 8/9 of the
run (its steps 60,000 and 80,000 of 90,000) after a linear warm-up from a third of the
rate over 500 iterations (over the first quarter of a run shorter than 2,000
iterations) and, when the backbone starts from trained weights, ``conv1``, ``res2`` and
every batch normalisation's scale and shift frozen: the numbers of the family's recipe
(:mod:`~cvzoo.models.instance_segmentation.mask_rcnn.training_recipe`).
The caller passes the examples through :class:`~cvzoo.transforms.
instance_segmentation_transform.MaskRCNNTransform`;
:func:`~cvzoo.models.detection.train_detector.train_detector` runs the trainer and writes
``model_final.npz`` with the class names.

Differences from ChainerCV: batch normalisation normalises with each batch's statistics
while training (``MaskRCNNTrainChain`` runs the backbone in training mode; ChainerCV
runs it in test mode).
"""

from cvzoo.core.optimizers import MomentumSGD, WeightDecay
from cvzoo.core.training.extensions import fail_on_non_number
from cvzoo.models.detection.train_detector import train_detector
from cvzoo.models.instance_segmentation.mask_rcnn import training_recipe
from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_train_chain import (
    MaskRCNNTrainChain,
)

LR_STEPS = training_recipe.CHAINERCV_LR_STEPS
LOSS_KEYS = training_recipe.LOSS_KEYS
WEIGHT_DECAY = training_recipe.CHAINERCV_WEIGHT_DECAY
WARMUP_ITER = training_recipe.CHAINERCV_WARMUP
WARMUP_START_RATIO = training_recipe.CHAINERCV_WARMUP_START_RATIO


def warmup_iterations(iteration):
    """ChainerCV's 500 warm-up iterations, or a quarter of a shorter run.

    >>> warmup_iterations(90000), warmup_iterations(1000)
    (500, 250)
    """
    return min(WARMUP_ITER, iteration // 4)


def default_lr(batchsize):
    """ChainerCV's learning rate for ``batchsize`` images per iteration: 0.02 * B / 16.

    >>> default_lr(16), default_lr(2)
    (0.02, 0.0025)
    """
    return training_recipe.CHAINERCV_LR * batchsize / training_recipe.CHAINERCV_BATCHSIZE


def make_optimizer(chain, lr, freeze_backbone):
    """MomentumSGD with weight decay set up on ``chain`` (see the module docstring).

    Args:
        chain (MaskRCNNTrainChain): the model's train chain.
        lr (float): the learning rate.
        freeze_backbone (bool): freeze ``extractor/base/conv1``, ``extractor/base/res2``
            and the batch normalisations (for a backbone from trained weights).
    """
    optimizer = MomentumSGD(lr=lr, momentum=0.9).setup(chain)
    optimizer.add_hook(WeightDecay(WEIGHT_DECAY))
    if freeze_backbone:
        training_recipe.freeze_fpn_resnet_stem(chain)
    return optimizer


def train_mask_rcnn(model, dataset, label_names, *, out, iteration, batchsize=2, lr=None,
                    freeze_backbone=False, device='cpu', communicator='none', seed=0,
                    resume=False, model_name=None, model_kwargs=None, train_chain=None,
                    cuda_graph=False):
    """Train ``model`` on ``dataset`` and write ``out/model_final.npz``.

    Args:
        model (MaskRCNNFPNResNet): the model, with ``len(label_names)`` classes.
        dataset: the training examples through :class:`MaskRCNNTransform` (e.g.
            ``TransformDataset(coco_dataset, MaskRCNNTransform(model, seed))``).
        label_names (sequence of str): the classes, saved with the model.
        out (str): the folder of the log, the snapshots and the model.
        iteration (int): length of the run.
        batchsize (int): images per iteration (per process under a communicator).
        lr (float or None): the learning rate; None: :func:`default_lr`.
        freeze_backbone (bool): see :func:`make_optimizer`.
        device, communicator, seed, resume, model_name, model_kwargs, cuda_graph: as
            :func:`~cvzoo.models.detection.train_detector.train_detector`.
        train_chain (MaskRCNNTrainChain or None): the chain of the losses (None: the
            default one on ``model``).

    Returns:
        Trainer or None: as ``train_detector``.

    Raises:
        NonFiniteError: a non-finite loss; ``model_final.npz`` is then not written.
    """
    chain = train_chain or MaskRCNNTrainChain(model)
    optimizer = make_optimizer(chain, default_lr(batchsize) if lr is None else lr,
                               freeze_backbone)
    return train_detector(
        model, optimizer, dataset, label_names, out=out, batchsize=batchsize,
        iteration=iteration, loss_keys=LOSS_KEYS, lr_steps=LR_STEPS,
        converter=training_recipe.padded_batches(model), device=device, communicator=communicator, seed=seed,
        resume=resume, model_name=model_name, model_kwargs=model_kwargs, cuda_graph=cuda_graph,
        guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False),
        warmup_iter=warmup_iterations(iteration), warmup_start_ratio=WARMUP_START_RATIO)
