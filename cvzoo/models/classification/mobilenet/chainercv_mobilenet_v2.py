"""MobileNetV2 in TensorFlow's layout, for ChainerCV's conversion of the TF-Slim weights.

ChainerCV converted the TF-Slim MobileNetV2 checkpoints (depth multipliers 1.0 and 1.4;
github.com/tensorflow/models, research/slim/nets/mobilenet) to .npz. The network is
cvzoo's :class:`~cvzoo.models.classification.mobilenet.mobilenet_v2.MobileNetV2` with
TensorFlow's numerical details:

- ``'SAME'`` padding: a stride-2 3x3 convolution (the stem and the depthwise stage of
  ``expanded_conv_1, _3, _6, _13``) pads ``(0, 1)`` (top/left 0, bottom/right 1) on an even
  side and ``(1, 1)`` on an odd one, done here by an explicit :func:`F.pad` before an
  unpadded convolution (:func:`tf_same_pad`); stride-1 layers pad 1 on each side, as
  everywhere in cvzoo;
- BatchNormalization with eps 1e-3 (TF-Slim's), decay 0.999 (ChainerCV's);
- the classifier of the file, ``logits_conv`` (a 1x1 convolution with bias), has 1001
  outputs, row 0 being TensorFlow's background class. The converter drops that row (as
  ChainerCV's ``thousand_categories_mode`` does) and loads the rest as the ``fc`` Linear,
  so logits and ``predict()`` probabilities are (B, 1000) over the ImageNet label names,
  in cvzoo's class order (the softmax runs over the 1000 classes only).

ChainerCV's parameter names (``conv/conv/conv/W``: the TFConvolution2D inside
TFConv2DBNActiv wraps a Convolution2D) map to cvzoo's (``conv/conv/W``); see
:func:`convert_chainercv`.
"""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models import zoo
from cvzoo.models.classification.mobilenet import mobilenet_v2
from cvzoo.models.common import foreign_names, imagenet_presets

# The width multiplier of each weights key.
KEY_WIDTHS = {'imagenet': 1.0, 'imagenet_1.4': 1.4}
_TF_BN_KWARGS = {'eps': 1e-3, 'decay': 0.999}
_BN_LEAVES = ('gamma', 'beta', 'avg_mean', 'avg_var', 'N')
_BACKGROUND_CLASSES = 1001  # TF-Slim's ImageNet classifiers: background + 1000 classes


def tf_same_pad(x, ksize, stride):
    """Zero-pad ``x`` as TensorFlow's ``padding='SAME'`` does before a convolution.

    Each spatial side of length ``n`` gets ``total = max((ceil(n / stride) - 1) * stride
    + ksize - n, 0)`` zeros, ``total // 2`` before and the rest after, so that an unpadded
    convolution then gives ``ceil(n / stride)`` outputs.

    Args:
        x (Variable or array): (B, C, H, W).
        ksize (int): the kernel size of the convolution that follows.
        stride (int): its stride.

    Returns:
        Variable or array: (B, C, H + pad_h, W + pad_w), ``x`` itself when no side is padded.

    >>> import numpy as np
    >>> tf_same_pad(np.ones((1, 1, 4, 5), np.float32), 3, 2).shape
    (1, 1, 5, 7)
    """
    widths = []
    for size in x.shape[2:]:
        n_out = -(-size // stride)
        total = max((n_out - 1) * stride + ksize - size, 0)
        widths.append((total // 2, total - total // 2))
    if not any(before or after for before, after in widths):
        return x
    return F.pad(x, ((0, 0), (0, 0)) + tuple(widths))


class _SamePadConv2DBNActiv(L.Conv2DBNActiv):
    """Conv2DBNActiv with TensorFlow's 'SAME' padding (the parameter names are unchanged)."""

    def forward(self, x):
        """Pad ``x`` (B, C, H, W) as 'SAME', then convolve, normalise and activate."""
        return super().forward(tf_same_pad(x, self.conv.ksize[0], self.conv.stride))


def _same_padded_copy(layer, initialW, bn_kwargs):
    """A _SamePadConv2DBNActiv with the shape, stride, groups and activation of ``layer``."""
    conv = layer.conv
    return _SamePadConv2DBNActiv(
        conv.in_channels, conv.out_channels, conv.ksize, conv.stride, 0, groups=conv.groups,
        initialW=initialW, activ=layer.activ, bn_kwargs=bn_kwargs)


@zoo.register('mobilenet_v2_chainercv', task='classification')
class ChainerCVMobileNetV2(mobilenet_v2.MobileNetV2):
    """MobileNetV2 with TensorFlow's padding and BN eps, for ChainerCV's converted weights.

    Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks", CVPR 2018.
    Layers and parameter names are those of
    :class:`~cvzoo.models.classification.mobilenet.mobilenet_v2.MobileNetV2`; the
    differences (stride-2 'SAME' padding, BN eps 1e-3, the 1001-way file classifier loaded
    without its background row) are listed in the module docstring.

    Weights keys (the key fixes the width; ChainerCV's single-crop top-1 error):

    - ``'imagenet'``: width 1.0, 28.3 % (the paper reports 28.0 %);
    - ``'imagenet_1.4'``: width 1.4, 24.3 % (the paper reports 25.3 %).

    Both take (x - 128) / 128 of an RGB image scaled to 256 on its shorter side and
    center-cropped to 224 (ChainerCV's evaluation, OpenCV resize). A local ChainerCV
    file needs ``source='chainercv'`` (an .npz is otherwise read as cvzoo's names).

    Args:
        n_class (int or None): classes; None takes the weights' (1000).
        pretrained_model (str or None): a weights key, a local file or None.
        width_multiplier (float or None): channel multiplier; None takes the key's width
            (1.0 without a key). A key with another width raises ValueError.
        source (str or None): name mapping of a local file (``'chainercv'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).
        fc_kwargs (dict or None): arguments of the ``fc`` Linear (default N(0, 0.01)).

    >>> model = ChainerCVMobileNetV2(n_class=10, width_multiplier=1.4)
    >>> model.pick = ('expanded_conv_5', 'expanded_conv_16')
    """

    _bn_kwargs = _TF_BN_KWARGS

    def __init__(self, n_class=None, pretrained_model=None, *, width_multiplier=None,
                 source=None, initialW=None, fc_kwargs=None):
        if width_multiplier is None:
            key = pretrained_model if isinstance(pretrained_model, str) else None
            width_multiplier = KEY_WIDTHS.get(key, 1.0)
        super().__init__(n_class, pretrained_model, width_multiplier=width_multiplier,
                         source=source, initialW=initialW, fc_kwargs=fc_kwargs)

    @classmethod
    def _weights_width(cls, key):
        return KEY_WIDTHS[key]

    def _build(self, n_class, initialW):
        super()._build(n_class, initialW)
        # NOTE: stride-1 layers pad 1 on each side, which is 'SAME' already; only the
        # stride-2 ones (the stem and four depthwise stages) differ and are replaced.
        stem = self.conv
        delattr(self, 'conv')  # NOTE: layer_names keeps 'conv' first, so the order stays
        self.conv = _same_padded_copy(stem, initialW, self._bn_kwargs)
        for name in mobilenet_v2.BLOCK_NAMES:
            block = getattr(self, name)
            if block.depthwise.conv.stride == 2:
                depthwise = block.depthwise
                delattr(block, 'depthwise')
                with block.init_scope():
                    block.depthwise = _same_padded_copy(depthwise, initialW, self._bn_kwargs)

    def convert_weights(self, raw, source):
        """Map a ChainerCV- or cvzoo-named file to cvzoo's names (zoo hook)."""
        if source == 'chainercv':
            return convert_chainercv(raw)
        if source == 'cvzoo':
            return {foreign_names.strip_root(k): v for k, v in raw.items()}
        raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for ChainerCV MobileNetV2 "
                         f'weights (TensorFlow layout), got {source!r}; torchvision files '
                         "load into MobileNetV2 ('mobilenet_v2')")


def chainercv_prefixes():
    """ChainerCV's TFConv2DBNActiv paths of MobileNetV2 (the same paths in cvzoo)."""
    prefixes = ['conv', 'conv1']
    for i, name in enumerate(mobilenet_v2.BLOCK_NAMES):
        stages = ('depthwise', 'project') if i == 0 else ('expand', 'depthwise', 'project')
        prefixes += [f'{name}/{stage}' for stage in stages]
    return prefixes


def _chainercv_key_map():
    table = {'logits_conv/conv/W': 'fc/W', 'logits_conv/conv/b': 'fc/b'}
    for prefix in chainercv_prefixes():
        table[f'{prefix}/conv/conv/W'] = f'{prefix}/conv/W'
        table.update({f'{prefix}/bn/{leaf}': f'{prefix}/bn/{leaf}' for leaf in _BN_LEAVES})
    return table


def convert_chainercv(raw):
    """Map a ChainerCV MobileNetV2 .npz (any width) to cvzoo's names and shapes.

    ``<layer>/conv/conv/W`` becomes ``<layer>/conv/W``; BN leaves keep their names (a
    missing ``N`` is set to 0); ``logits_conv/conv/{W,b}`` ((n, C, 1, 1) and (n,)) become
    ``fc/{W,b}`` ((n, C) and (n,)), without row 0 when n is 1001 (TF's background class).

    Raises:
        cvzoo.errors.WeightLoadError: keys of the file that the mapping does not know
            (all named at once).
    """
    table = _chainercv_key_map()
    arrays = foreign_names.map_keys(
        {foreign_names.strip_root(k): v for k, v in raw.items()}, table.__getitem__,
        'chainercv', 'ChainerCV MobileNetV2 weights')
    W, b = arrays.get('fc/W'), arrays.get('fc/b')
    if W is not None and W.ndim == 4 and W.shape[2:] == (1, 1):
        arrays['fc/W'] = W = W.reshape(W.shape[:2])
    if W is not None and b is not None and len(W) == len(b) == _BACKGROUND_CLASSES:
        arrays['fc/W'], arrays['fc/b'] = W[1:], b[1:]
    return foreign_names.add_bn_counts(arrays)


_NOTES = ('TF-Slim checkpoint converted by ChainerCV; TensorFlow SAME padding and BN eps '
          '1e-3; the 1001-way classifier is loaded without its background row (1000 '
          'ImageNet classes); ChainerCV reports its score with the OpenCV resize.')
TF_PRESET = zoo.Preset(size=224, mean=(128.0, 128.0, 128.0), std=(128.0, 128.0, 128.0),
                       interpolation='bilinear', resize_backend='cv2', crop_fraction=0.875)

ChainerCVMobileNetV2.weights = {
    'imagenet': imagenet_presets.chainercv_entry(
        'mobilenet_v2_depth_multiplier_1.0_imagenet_converted_2019_04_01.npz', 28.3,
        original='28.0 %, Sandler et al. 2018', preset=TF_PRESET,
        notes=_NOTES),
    'imagenet_1.4': imagenet_presets.chainercv_entry(
        'mobilenet_v2_depth_multiplier_1.4_imagenet_converted_2019_05_13.npz', 24.3,
        original='25.3 %, Sandler et al. 2018', preset=TF_PRESET,
        notes=_NOTES + ' The date in the file name is not confirmed by a ChainerCV source '
        'at hand; if the host answers 404, put the file by hand where the error says.'),
}
