"""SegmentationTrainChain: pixel-wise softmax cross-entropy loss of a segmenter."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend
from cvzoo.core.training import reporter


def enet_class_weight(labels, n_class, c=1.02):
    """Class weights ``1 / log(c + p_k)`` from the class frequencies p_k of ``labels``.

    This is the weighting of ENet (Paszke et al., 2016, Sec. 5.2), which ESPNet's
    training script uses with c = 1.10 on CamVid and Cityscapes.

    Args:
        labels (iterable): (H, W) int arrays; negative values (ignored pixels) are skipped.
        n_class (int): the number of classes (weights of absent classes use p_k = 0).
        c (float): > 1, bounds the weights by 1 / log(c).

    Returns:
        numpy.ndarray: (n_class,) float32.
    """
    if c <= 1:
        raise ValueError(f'c: expected a number > 1, got {c}')
    counts = numpy.zeros(n_class, numpy.int64)
    for label in labels:
        label = numpy.asarray(label).ravel()
        counts += numpy.bincount(label[label >= 0], minlength=n_class)[:n_class]
    frequency = counts / max(counts.sum(), 1)
    return (1.0 / numpy.log(c + frequency)).astype(numpy.float32)


class SegmentationTrainChain(L.Chain):
    """Wrap a segmenter so that calling it on a batch returns the training loss.

    ``loss = chain(imgs, labels)``: the model's scores (resized bilinearly to the
    labels' size if they differ) against the labels, by softmax cross-entropy averaged
    over the pixels not equal to ``ignore_label``. The loss is reported as ``'loss'``.

    Args:
        model (Link): ``model(x)`` gives (B, C, h, w) scores of preprocessed images.
        class_weight (array or None): (C,) float32 weight of each class.
        ignore_label (int): label value that gives no loss (DESIGN.md: -1).

    Attributes:
        model (Link): the wrapped model (its parameters are the chain's).
    """

    def __init__(self, model, class_weight=None, ignore_label=-1):
        super().__init__()
        if class_weight is not None:
            class_weight = numpy.asarray(class_weight, numpy.float32)
            if class_weight.ndim != 1:
                raise ValueError(f'class_weight: expected a (C,) array, got shape '
                                 f'{class_weight.shape}')
        self.class_weight = class_weight
        self.ignore_label = ignore_label
        with self.init_scope():
            self.model = model

    def forward(self, imgs, labels):
        """Compute the loss.

        Args:
            imgs (Variable or array): (B, 3, H, W) float32 preprocessed images.
            labels (array): (B, H, W) int32 class ids, ``ignore_label`` to skip.

        Returns:
            Variable: the 0-d float32 loss.
        """
        score = self.model(imgs)
        if score.shape[2:] != labels.shape[1:]:
            score = F.resize_images(score, labels.shape[1:], align_corners=False)
        class_weight = self.class_weight
        if class_weight is not None:
            class_weight = backend.to_device(class_weight, backend.get_device_from_array(score))
        loss = F.softmax_cross_entropy(score, labels, class_weight=class_weight,
                                       ignore_label=self.ignore_label)
        reporter.report({'loss': loss}, self)
        return loss
