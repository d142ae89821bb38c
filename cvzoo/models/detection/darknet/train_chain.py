"""YOLOTrainChain: the YOLOv2 or YOLOv3 loss of a DarknetDetector, for training."""

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.training import convert, reporter
from cvzoo.models.detection.darknet import region_loss, yolo_loss

# the loss of each head kind: (raw, head, bboxes, labels) -> (xy, wh, obj, cls)
HEAD_LOSSES = {'yolo': yolo_loss.yolo_head_loss, 'region': region_loss.region_head_loss}


class YOLOTrainChain(L.Chain):
    """Compute ``loss = xy + wh + obj + cls`` over the heads of a batch.

    Reports ``loss``, ``loss/xy``, ``loss/wh``, ``loss/obj`` and ``loss/cls`` through
    the training reporter. Each head gets the loss of its kind: ``[yolo]`` heads (YOLOv3,
    Yolo-Fastest) :mod:`~cvzoo.models.detection.darknet.yolo_loss`, ``[region]`` heads
    (YOLOv2) :mod:`~cvzoo.models.detection.darknet.region_loss`; their docstrings give
    the terms and what differs from Darknet.

    The boxes come padded to fixed shapes (``images_and_padded_boxes``, the recipe's
    converter), so that the whole step, target assignment included, runs on the device
    and can be one CUDA graph (``cvzoo train --cuda-graph``).

    Args:
        model (DarknetDetector): the detector; its parameters are ``model/...`` here.

    Example, with a DarknetDetector ``model`` and a batch::

        loss = YOLOTrainChain(model)(x, bboxes, labels)
    """

    def __init__(self, model):
        super().__init__()
        with self.init_scope():
            self.model = model

    def forward(self, x, bboxes, labels):
        """Loss of a batch.

        Args:
            x (array): (B, 3, H, W) float32 network inputs (``model.prepare`` output,
                or augmented images at ``model.insize``), values in [0, 1].
            bboxes (array): (B, R, 4) float (x_min, y_min, x_max, y_max) in pixels of
                ``x``, in the model's box convention (``YOLOTransform`` gives them so; the
                chain takes them as they are), on x's device; rows past an image's boxes
                are padding (any values).
            labels (array): (B, R) int class ids, -1 on padding rows (the recipe's
                converter checks them on the host; here they are not, which on a GPU would
                wait for the device). Per-image lists of (R_i, 4) boxes and (R_i,) labels
                are taken too (padded and checked here and sent to x's device: not inside
                a CUDA graph).

        Returns:
            Variable: the 0-d loss.

        Raises:
            cvzoo.errors.UsageError: boxes or labels of other shapes, or a listed label
                that is no class id of the model.
        """
        if isinstance(bboxes, (list, tuple)) or isinstance(labels, (list, tuple)):
            bboxes, labels = convert.pad_boxes(bboxes, labels, n_class=self.model.n_fg_class)
        _check_boxes(x, bboxes, labels)
        device = backend.get_device_from_array(x)
        bboxes, labels = backend.to_device(bboxes, device), backend.to_device(labels, device)
        bboxes = _fractions(bboxes, labels, x.shape[2:])
        terms = [0, 0, 0, 0]
        for raw, head in zip(self.model(x), self.model.network.heads):
            head = dict(head, insize=self.model.insize)
            parts = HEAD_LOSSES[head['kind']](raw, head, bboxes, labels)
            terms = [total + part for total, part in zip(terms, parts)]
        loss = terms[0] + terms[1] + terms[2] + terms[3]
        reporter.report({'loss': loss, 'loss/xy': terms[0], 'loss/wh': terms[1],
                         'loss/obj': terms[2], 'loss/cls': terms[3]}, self)
        return loss


def _check_boxes(x, bboxes, labels):
    n = x.shape[0]
    if getattr(bboxes, 'ndim', None) != 3 or bboxes.shape[0] != n or bboxes.shape[2] != 4:
        raise errors.UsageError(
            f'YOLOTrainChain: bboxes: expected ({n}, R, 4) boxes (or a list of {n} (R_i, 4) '
            f'arrays), got {getattr(bboxes, "shape", type(bboxes).__name__)}')
    if getattr(labels, 'shape', None) != bboxes.shape[:2]:
        raise errors.UsageError(
            f'YOLOTrainChain: labels: expected {bboxes.shape[:2]} class ids (one per box '
            f'row), got {getattr(labels, "shape", type(labels).__name__)}')


def _fractions(bboxes, labels, size):
    """(B, R, 4) float64 boxes as fractions of the (H, W) input; padding rows zero boxes
    (which overlap nothing)."""
    xp = backend.get_array_module(bboxes)
    H, W = size
    scale = backend.device_constant(numpy.array([W, H, W, H], numpy.float64), bboxes)
    return xp.where((labels >= 0)[..., None], bboxes.astype(numpy.float64) / scale, 0)
