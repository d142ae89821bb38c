"""LR-ASPP MobileNetV3-Large: torchvision's ``lraspp_mobilenet_v3_large``."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification.mobilenet import mobilenet_v3
from cvzoo.models.segmentation import segmentation_model, torchvision_names, torchvision_presets
from cvzoo.models.segmentation.lraspp.lraspp_head import LRASPPHead

# torchvision's ``dilated=True``: the last three blocks (its C4 stage) keep stride 16.
DILATED_BLOCKS = ('expanded_conv_12', 'expanded_conv_13', 'expanded_conv_14')
DILATION = 2
# The low-level map: the first block of stride 8 (torchvision's ``stage_indices[-4]``).
LOW_LAYER, HIGH_LAYER = 'expanded_conv_3', 'conv1'
LOW_CHANNELS, HIGH_CHANNELS = 40, 960


def _dilate_depthwise(block, dilate, initialW):
    """Replace ``block``'s depthwise convolution by a stride-1 one dilated by ``dilate``."""
    old = block.depthwise
    channels, _, ksize, _ = old.conv.W.shape
    with block.init_scope():
        block.depthwise = L.Conv2DBNActiv(
            channels, channels, ksize, 1, dilate * (ksize // 2), dilate=dilate,
            groups=channels, initialW=initialW, activ=old.activ,
            bn_kwargs={'eps': old.bn.eps, 'decay': old.bn.decay})


def dilated_mobilenet_v3_large(initialW=None):
    """MobileNetV3-Large up to ``conv1``, its last stage dilated: output stride 16.

    Returns:
        MobileNetV3Large: with ``pick = (LOW_LAYER, HIGH_LAYER)`` and the pooling and
        classifier layers removed.
    """
    backbone = mobilenet_v3.MobileNetV3Large(n_class=1, initialW=initialW)
    backbone.pick = (LOW_LAYER, HIGH_LAYER)
    backbone.remove_unused()
    for name in DILATED_BLOCKS:
        _dilate_depthwise(backbone[name], DILATION, initialW)
    return backbone


@zoo.register('lraspp_mobilenet_v3_large', task='semantic_segmentation')
class LRASPPMobileNetV3Large(segmentation_model.SegmentationModel):
    """LR-ASPP on MobileNetV3-Large (Howard et al., "Searching for MobileNetV3", ICCV
    2019, section 6.4), as torchvision's ``lraspp_mobilenet_v3_large``.

    The backbone is MobileNetV3-Large whose last stage (``expanded_conv_12`` ..
    ``expanded_conv_14``) has stride 1 and dilation 2, so ``conv1`` is at stride 16; the
    :class:`LRASPPHead` combines it with ``expanded_conv_3`` (stride 8), and the scores
    are resized bilinearly to the input. As in torchvision (unlike the paper), the
    channel counts of the last stage are not halved and the gate's pooling is global.

    Weights keys: ``'coco_voc'`` (torchvision's lraspp_mobilenet_v3_large-d234d4ea.pth,
    COCO images with the 21 VOC labels; mIoU 57.9 on the COCO val2017 VOC subset).

    predict() resizes each image so that its shorter side is 520, as torchvision's preset.

    Args:
        n_class (int or None): the classes (background included); None takes the
            weights' (a zoo key is then required).
        pretrained_model (str or None): a weights key, a local file or None.
        source (str or None): name mapping of a local file (``'torchvision'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).

    Attributes:
        backbone (MobileNetV3Large, truncated and dilated), classifier (LRASPPHead).
    """

    preset = torchvision_presets.TORCHVISION_PRESET

    def __init__(self, n_class=None, pretrained_model=None, *, source=None, initialW=None):
        super().__init__()
        built_n_class = segmentation_model.n_class_for(type(self), pretrained_model, n_class)
        self.initialW = initialW or initializers.HeNormal(fan_option='fan_out')
        with self.init_scope():
            self.backbone = dilated_mobilenet_v3_large(self.initialW)
        self.reset_head(built_n_class)
        self._load_pretrained(pretrained_model, n_class, source)

    def reset_head(self, n_class):
        """Make the head anew for ``n_class`` classes (random weights)."""
        if not isinstance(n_class, int) or n_class < 1:
            raise ValueError(f'n_class: expected a positive int, got {n_class!r}')
        self.n_class = n_class
        with self.init_scope():
            self.classifier = LRASPPHead(LOW_CHANNELS, HIGH_CHANNELS, n_class,
                                         initialW=self.initialW)
        self.to_device(self.device)

    def input_size(self, img):
        """(h, w) the network sees: the shorter side at the preset's size."""
        return torchvision_presets.input_size(self.preset, img)

    def forward(self, x):
        """Class scores of (B, 3, H, W) standardised RGB images.

        Returns:
            Variable: (B, n_class, H, W) float32 logits.
        """
        low, high = self.backbone(x)
        return F.resize_images(self.classifier(low, high), x.shape[2:], align_corners=False)

    def torchvision_table(self):
        """torchvision module path -> (cvzoo link path, kind) of this model."""
        table = {}
        for torch_path, (cvzoo_path, kind) in mobilenet_v3.torchvision_table().items():
            if torch_path.startswith('features.'):
                table['backbone.' + torch_path.removeprefix('features.')] = (
                    'backbone/' + cvzoo_path, kind)
        self.classifier.add_torchvision_names(table, 'classifier', 'classifier')
        return table

    def convert_weights(self, raw, source):
        """Map a torchvision- or cvzoo-named file to this model's names (zoo hook).

        Raises:
            ValueError: an unknown ``source``.
            cvzoo.errors.WeightLoadError: every unused key and every missing parameter.
        """
        if source in torchvision_names.TORCH_SOURCES:
            return torchvision_names.convert(self, raw, self.torchvision_table(),
                                             'LRASPPMobileNetV3Large weights')
        if source == 'cvzoo':
            return {k.removeprefix('/'): v for k, v in raw.items()}
        raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo', got {source!r}")


LRASPPMobileNetV3Large.weights = {'coco_voc': torchvision_presets.torchvision_entry(
    'lraspp_mobilenet_v3_large-d234d4ea.pth', 57.9, 91.2, page='lraspp_mobilenet_v3_large')}
