"""PSPNetTrainChain: PSPNet's training loss with the auxiliary head on ``res4``."""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend, initializers
from cvzoo.core.training import reporter

AUX_WEIGHT = 0.4
DROPOUT_RATIO = 0.1


class PSPNetTrainChain(L.Chain):
    """Wrap a PSPNet so that calling it on a batch returns ChainerCV's training loss.

    ``loss = main_loss + aux_weight * aux_loss`` (Zhao et al., CVPR 2017, Sec. 3.4: the
    deep supervision of ``res4``, weight 0.4). The main branch is the model's head with
    dropout (ratio 0.1) after ``head_conv1``; the auxiliary branch, which exists only
    here, is a 3x3 Conv2DBNActiv to 512 channels, dropout and a 3x3 convolution to the
    classes, as in ChainerCV's examples/pspnet/train_multi.py. Both scores are resized
    bilinearly (corners aligned) to the labels' size and scored by softmax
    cross-entropy; ``loss``, ``main_loss`` and ``aux_loss`` are reported.

    Move the chain (not only the model) to the device: the auxiliary layers are its own.

    Args:
        model (PSPNet): anything with ``extractor`` (giving ``res4, res5``), ``ppm``,
            ``head_conv1``, ``head_conv2`` and ``n_class``.
        aux_weight (float): weight of the auxiliary loss.
        class_weight (array or None): (n_class,) float32 weight of each class.
        ignore_label (int): label value that gives no loss (DESIGN.md: -1).
        dropout_ratio (float): of both dropouts.

    Attributes:
        model, aux_conv1 (Conv2DBNActiv), aux_conv2 (Convolution2D with bias).
    """

    def __init__(self, model, aux_weight=AUX_WEIGHT, class_weight=None, ignore_label=-1, *,
                 dropout_ratio=DROPOUT_RATIO):
        super().__init__()
        if aux_weight < 0:
            raise ValueError(f'aux_weight: expected a number >= 0, got {aux_weight}')
        if class_weight is not None:
            class_weight = numpy.asarray(class_weight, numpy.float32)
            if class_weight.shape != (model.n_class,):
                raise ValueError(f'class_weight: expected shape ({model.n_class},), got '
                                 f'{class_weight.shape}')
        self.aux_weight, self.dropout_ratio = aux_weight, dropout_ratio
        self.class_weight, self.ignore_label = class_weight, ignore_label
        initialW = initializers.HeNormal()
        with self.init_scope():
            self.model = model
            self.aux_conv1 = L.Conv2DBNActiv(None, 512, 3, 1, 1, initialW=initialW)
            self.aux_conv2 = L.Convolution2D(512, model.n_class, 3, 1, 1, initialW=initialW)

    def scores(self, imgs):
        """(main, aux) class scores of (B, 3, H, W) preprocessed images, at the features'
        resolution."""
        model = self.model
        res4, res5 = model.extractor(imgs)
        main = model.head_conv1(model.ppm(res5))
        main = model.head_conv2(F.dropout(main, self.dropout_ratio))
        aux = self.aux_conv2(F.dropout(self.aux_conv1(res4), self.dropout_ratio))
        return main, aux

    def forward(self, imgs, labels):
        """Compute the loss.

        Args:
            imgs (Variable or array): (B, 3, H, W) float32 preprocessed images.
            labels (array): (B, H, W) int32 class ids, ``ignore_label`` to skip.

        Returns:
            Variable: the 0-d float32 loss.
        """
        class_weight = self.class_weight
        if class_weight is not None:
            class_weight = backend.to_device(class_weight, self.device)
        losses = []
        for score in self.scores(imgs):
            score = F.resize_images(score, labels.shape[1:], align_corners=True)
            losses.append(F.softmax_cross_entropy(score, labels, class_weight=class_weight,
                                                  ignore_label=self.ignore_label))
        main_loss, aux_loss = losses
        loss = main_loss + self.aux_weight * aux_loss
        reporter.report({'loss': loss, 'main_loss': main_loss, 'aux_loss': aux_loss}, self)
        return loss
