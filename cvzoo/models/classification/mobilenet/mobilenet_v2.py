"""MobileNetV2 (Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks",
CVPR 2018), laid out as torchvision's ``mobilenet_v2``.

Layers (all pickable), with ChainerCV's names: ``conv`` (3x3, stride 2), ``expanded_conv``,
``expanded_conv_1`` ... ``expanded_conv_16`` (the 17 inverted residual blocks of the
paper's Table 2), ``conv1`` (1x1 to 1280 channels), ``pool`` (global average, (B, C)),
``dropout`` and ``fc`` (the logits). Strides of 32 in all: ``expanded_conv_2``,
``expanded_conv_5``, ``expanded_conv_12`` and ``expanded_conv_16`` end the stages of
strides 4, 8, 16 and 32.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier
from cvzoo.models.classification.mobilenet import blocks, name_mapping
from cvzoo.models.common import imagenet_presets

# (expansion t, channels c, repeats n, first stride s), the paper's Table 2
_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
             (6, 160, 3, 2), (6, 320, 1, 1))
BLOCK_NAMES = ('expanded_conv',) + tuple(f'expanded_conv_{i}' for i in range(1, 17))
_BN_KWARGS = {'eps': 1e-5, 'decay': 0.9}  # torchvision's BatchNorm2d defaults


def _block_specs(width_multiplier):
    """(in, expanded, out, stride) of each of the 17 blocks."""
    specs = []
    in_channels = blocks.make_divisible(32 * width_multiplier)
    for t, c, n, s in _SETTINGS:
        out_channels = blocks.make_divisible(c * width_multiplier)
        for i in range(n):
            specs.append((in_channels, in_channels * t, out_channels,
                          s if i == 0 else 1))
            in_channels = out_channels
    return specs


@zoo.register('mobilenet_v2', task='classification')
class MobileNetV2(image_classifier.ImageClassifier):
    """MobileNetV2: a 3x3 stem, 17 inverted residual blocks, a 1x1 conv and a classifier.

    The width is one argument: ``width_multiplier=1.4`` gives the wider network of the
    paper (channels rounded by :func:`blocks.make_divisible`, the last conv widened to
    1792); there is one registry name, ``'mobilenet_v2'``.

    Weights keys (width 1.0 only):

    - ``'imagenet'``: torchvision's mobilenet_v2-b0353104.pth, acc@1 71.878;
    - ``'imagenet_v2'``: torchvision's mobilenet_v2-7ebf99e0.pth (new recipe), acc@1 72.154.

    Args:
        n_class (int or None): classes; None takes the weights' (1000 without weights).
        pretrained_model (str or None): a weights key, a local file or None.
        width_multiplier (float): channel multiplier, > 0 (the paper uses 0.35 to 1.4).
        source (str or None): name mapping of a local file (``'torchvision'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).
        fc_kwargs (dict or None): arguments of the ``fc`` Linear (default N(0, 0.01)).

    >>> model = MobileNetV2(n_class=10)
    >>> model.pick = ('expanded_conv_5', 'expanded_conv_16')
    """

    head_name = 'fc'
    _bn_kwargs = _BN_KWARGS  # subclass hook: the BN arguments of every layer

    def __init__(self, n_class=None, pretrained_model=None, *, width_multiplier=1.0,
                 source=None, initialW=None, fc_kwargs=None):
        if not isinstance(width_multiplier, (int, float)) or width_multiplier <= 0:
            raise ValueError(f'width_multiplier: expected a number > 0, got '
                             f'{width_multiplier!r}')
        if pretrained_model in type(self).weights \
                and width_multiplier != self._weights_width(pretrained_model):
            raise ValueError(f'width_multiplier: weights {pretrained_model!r} exist for width '
                             f'{self._weights_width(pretrained_model)} only, got '
                             f'width_multiplier={width_multiplier}')
        super().__init__()
        self.width_multiplier = width_multiplier
        if pretrained_model:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero()
        self.fc_kwargs = dict(fc_kwargs or {})
        self.fc_kwargs.setdefault('initialW', initializers.Normal(0.01))
        n_out = image_classifier.n_class_for(type(self), pretrained_model, n_class, 1000)
        with self.init_scope():
            self._build(n_out, initialW or initializers.HeNormal(fan_option='fan_out'))
        self._load_pretrained(pretrained_model, n_class, source)

    @classmethod
    def _weights_width(cls, key):
        """The width multiplier the weights ``key`` need (subclass hook; here all 1.0)."""
        return 1.0

    @property
    def n_feature(self):
        """Channels of ``conv1`` (the input of ``fc``)."""
        return blocks.make_divisible(1280 * max(1.0, self.width_multiplier))

    def _build(self, n_class, initialW):
        specs = _block_specs(self.width_multiplier)
        self.conv = L.Conv2DBNActiv(3, specs[0][0], 3, 2, 1, initialW=initialW,
                                    activ=F.relu6, bn_kwargs=self._bn_kwargs)
        for name, (in_channels, expanded, out_channels, stride) in zip(BLOCK_NAMES, specs):
            setattr(self, name, blocks.ExpandedConv2D(
                in_channels, expanded, out_channels, stride=stride, activ=F.relu6,
                initialW=initialW, bn_kwargs=self._bn_kwargs))
        self.conv1 = L.Conv2DBNActiv(specs[-1][2], self.n_feature, 1, initialW=initialW,
                                     activ=F.relu6, bn_kwargs=self._bn_kwargs)
        self.pool = functools.partial(F.mean, axis=(2, 3))
        self.dropout = functools.partial(F.dropout, ratio=0.2)
        self.fc = L.Linear(self.n_feature, n_class, **self.fc_kwargs)

    def reset_head(self, n_class):
        """Replace ``fc`` by a new Linear(n_feature, n_class)."""
        delattr(self, 'fc')
        with self.init_scope():
            self.fc = L.Linear(self.n_feature, n_class, **self.fc_kwargs)
        self.fc.to_device(self.device)

    def convert_weights(self, raw, source):
        """Map a torchvision- or cvzoo-named file to cvzoo's names (zoo hook)."""
        return name_mapping.convert(raw, source, torchvision_table(), 'MobileNetV2 weights')


def torchvision_table():
    """torchvision ``mobilenet_v2`` module paths -> (cvzoo path, kind), any width.

    ``features.0`` is the stem, ``features.1`` ... ``features.17`` the blocks (each a
    ``conv`` Sequential: [expand,] depthwise, projection conv, projection BN),
    ``features.18`` the last 1x1 conv and ``classifier.1`` the Linear.
    """
    table = {}
    name_mapping.conv_bn(table, 'features.0', 'conv')
    for i, name in enumerate(BLOCK_NAMES, start=1):
        stages = ('depthwise',) if i == 1 else ('expand', 'depthwise')
        for j, stage in enumerate(stages):
            name_mapping.conv_bn(table, f'features.{i}.conv.{j}', f'{name}/{stage}')
        table[f'features.{i}.conv.{len(stages)}'] = (f'{name}/project/conv', 'conv')
        table[f'features.{i}.conv.{len(stages) + 1}'] = (f'{name}/project/bn', 'bn')
    name_mapping.conv_bn(table, 'features.18', 'conv1')
    table['classifier.1'] = ('fc', 'linear')
    return table


MobileNetV2.weights = {
    'imagenet': imagenet_presets.torchvision_entry('mobilenet_v2-b0353104.pth', 71.878,
                                                   page='mobilenet_v2'),
    'imagenet_v2': imagenet_presets.torchvision_entry('mobilenet_v2-7ebf99e0.pth', 72.154,
                                                      page='mobilenet_v2', v2=True),
}
