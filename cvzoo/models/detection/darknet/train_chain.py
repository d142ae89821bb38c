"""YOLOTrainChain: the YOLOv2 or YOLOv3 loss of a DarknetDetector, for training."""

import cvzoo.core.links as L
from cvzoo.core.training import reporter
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
            bboxes (list of array): per image (R, 4) float (x_min, y_min, x_max, y_max)
                in pixels of ``x``, in the model's box convention (``YOLOTransform``
                gives them so; the chain takes them as they are).
            labels (list of array): per image (R,) int32 class ids.

        Returns:
            Variable: the 0-d loss.
        """
        H, W = x.shape[2:]
        scale = [W, H, W, H]
        bboxes = [bbox / scale for bbox in bboxes]
        terms = [0, 0, 0, 0]
        for raw, head in zip(self.model(x), self.model.network.heads):
            head = dict(head, insize=self.model.insize)
            parts = HEAD_LOSSES[head['kind']](raw, head, bboxes, labels)
            terms = [total + part for total, part in zip(terms, parts)]
        loss = terms[0] + terms[1] + terms[2] + terms[3]
        reporter.report({'loss': loss, 'loss/xy': terms[0], 'loss/wh': terms[1],
                         'loss/obj': terms[2], 'loss/cls': terms[3]}, self)
        return loss
