"""DilatedResNetSegmenter: a head on a dilated ResNet, as torchvision's segmenters.

The base of :class:`FCNResNet50` and :class:`DeepLabV3ResNet50` (and their ResNet-101
twins), after torchvision's ``_SimpleSegmentationModel``: the backbone's ``res5``
(stride 8) goes through the main head, ``res4`` through an auxiliary FCN head that only
training uses, and both score maps are resized bilinearly (half-pixel centres) to the
input size.
"""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.models.segmentation import (
    segmentation_model,
    torchvision_dilated_resnet,
    torchvision_names,
    torchvision_presets,
)
from cvzoo.models.segmentation.fcn_head import FCNHead


class DilatedResNetSegmenter(segmentation_model.SegmentationModel):
    """A ``head_class`` head on :class:`DilatedResNet`, plus an auxiliary FCN head.

    Subclasses set ``head_class``: a Link class called as ``head_class(2048, n_class,
    initialW=...)`` with a method ``add_torchvision_names(table, torch_prefix,
    cvzoo_prefix)``.

    predict() resizes each image so that its shorter side is the preset's size (520),
    keeping its aspect ratio, as torchvision's preset does.

    Args:
        n_layer (int): 50 or 101.
        n_class (int or None): the classes (background included); None takes the
            weights' (a zoo key is then required). A different number than the weights'
            loads everything but the heads, which are made anew.
        pretrained_model (str or None): a weights key, a local file or None.
        aux (bool): build the auxiliary head (torchvision's ``aux_loss``). Without it,
            a torchvision file's ``aux_classifier.*`` keys are dropped on loading.
        source (str or None): name mapping of a local file (``'torchvision'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).

    Attributes:
        backbone (DilatedResNet), classifier (the main head), aux_classifier (FCNHead on
        the 1024 ``res4`` channels; absent with ``aux=False``).
    """

    head_class = None
    preset = torchvision_presets.TORCHVISION_PRESET

    def __init__(self, n_layer, n_class=None, pretrained_model=None, *, aux=True, source=None,
                 initialW=None):
        super().__init__()
        built_n_class = segmentation_model.n_class_for(type(self), pretrained_model, n_class)
        self.n_layer, self.aux = n_layer, bool(aux)
        self.initialW = initialW or initializers.HeNormal(fan_option='fan_out')
        # NOTE: zeros are cheaper than random numbers about to be replaced
        backbone_initialW = initializers.Zero() if pretrained_model else self.initialW
        with self.init_scope():
            self.backbone = torchvision_dilated_resnet.DilatedResNet(n_layer, backbone_initialW)
        self.reset_head(built_n_class)
        self._load_pretrained(pretrained_model, n_class, source)

    def reset_head(self, n_class):
        """Make the main (and auxiliary) head anew for ``n_class`` classes."""
        if not isinstance(n_class, int) or n_class < 1:
            raise ValueError(f'n_class: expected a positive int, got {n_class!r}')
        self.n_class = n_class
        with self.init_scope():
            self.classifier = self.head_class(2048, n_class, initialW=self.initialW)
            if self.aux:
                self.aux_classifier = FCNHead(1024, n_class, initialW=self.initialW)
        self.to_device(self.device)

    def input_size(self, img):
        """(h, w) the network sees: the shorter side at the preset's size."""
        return torchvision_presets.input_size(self.preset, img)

    def forward(self, x):
        """Class scores of (B, 3, H, W) standardised RGB images.

        Returns:
            Variable: (B, n_class, H, W) float32 logits.
        """
        _, res5 = self.backbone(x)
        return F.resize_images(self.classifier(res5), x.shape[2:], align_corners=False)

    def forward_with_aux(self, x):
        """Main and auxiliary scores, both (B, n_class, H, W), for training.

        torchvision trains with ``loss(main) + 0.5 * loss(aux)``.

        Raises:
            ValueError: the model was built with ``aux=False``.
        """
        if not self.aux:
            raise ValueError('forward_with_aux: this model was built with aux=False')
        res4, res5 = self.backbone(x)
        size = x.shape[2:]
        return (F.resize_images(self.classifier(res5), size, align_corners=False),
                F.resize_images(self.aux_classifier(res4), size, align_corners=False))

    def torchvision_table(self):
        """torchvision module path -> (cvzoo link path, kind) of this model."""
        n_blocks = torchvision_dilated_resnet.N_BLOCKS[self.n_layer]
        table = torchvision_names.resnet_table({}, n_blocks, 'backbone', 'backbone')
        self.classifier.add_torchvision_names(table, 'classifier', 'classifier')
        if self.aux:
            self.aux_classifier.add_torchvision_names(table, 'aux_classifier', 'aux_classifier')
        return table

    def convert_weights(self, raw, source):
        """Map a torchvision- or cvzoo-named file to this model's names (zoo hook).

        Raises:
            ValueError: an unknown ``source``.
            cvzoo.errors.WeightLoadError: every unused key and every missing parameter.
        """
        if source in torchvision_names.TORCH_SOURCES:
            drop = () if self.aux else ('aux_classifier.',)
            return torchvision_names.convert(self, raw, self.torchvision_table(),
                                             f'{type(self).__name__} weights', drop)
        if source == 'cvzoo':
            return {k.removeprefix('/'): v for k, v in raw.items()}
        raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo', got {source!r}")
