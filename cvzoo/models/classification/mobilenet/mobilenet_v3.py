"""MobileNetV3-Large (Howard et al., "Searching for MobileNetV3", ICCV 2019), laid out as
torchvision's ``mobilenet_v3_large``.

Layers (all pickable): ``conv`` (3x3, stride 2, hard swish), ``expanded_conv``,
``expanded_conv_1`` ... ``expanded_conv_14`` (the 15 bneck blocks of the paper's
Table 1), ``conv1`` (1x1 to 960 channels, hard swish), ``pool`` (global average,
(B, 960)), ``fc1`` (960 -> 1280), ``fc1_activ`` (hard swish), ``dropout`` and ``fc2``
(the logits). ``expanded_conv_2``, ``expanded_conv_5``, ``expanded_conv_11`` and
``conv1`` end the stages of strides 4, 8, 16 and 32.

As in torchvision (and unlike the paper's Figure 4), the SE gate's hidden layer has
``make_divisible(expanded / 4)`` channels and its gate is ``relu6(x + 3) / 6``; batch
normalisation uses eps 1e-3.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier
from cvzoo.models.classification.mobilenet import blocks, name_mapping
from cvzoo.models.common import imagenet_presets

# (kernel, expanded, out, SE, activation, stride) of each bneck, the paper's Table 1
_LARGE = ((3, 16, 16, False, 'RE', 1), (3, 64, 24, False, 'RE', 2),
          (3, 72, 24, False, 'RE', 1), (5, 72, 40, True, 'RE', 2),
          (5, 120, 40, True, 'RE', 1), (5, 120, 40, True, 'RE', 1),
          (3, 240, 80, False, 'HS', 2), (3, 200, 80, False, 'HS', 1),
          (3, 184, 80, False, 'HS', 1), (3, 184, 80, False, 'HS', 1),
          (3, 480, 112, True, 'HS', 1), (3, 672, 112, True, 'HS', 1),
          (5, 672, 160, True, 'HS', 2), (5, 960, 160, True, 'HS', 1),
          (5, 960, 160, True, 'HS', 1))
_ACTIVATIONS = {'RE': F.relu, 'HS': F.hard_swish}
BLOCK_NAMES = ('expanded_conv',) + tuple(f'expanded_conv_{i}' for i in range(1, 15))
_BN_KWARGS = {'eps': 1e-3, 'decay': 0.99}  # torchvision: eps=0.001, momentum=0.01
_STEM, _LAST_CONV, _N_FEATURE = 16, 960, 1280


@zoo.register('mobilenet_v3_large', task='classification')
class MobileNetV3Large(image_classifier.ImageClassifier):
    """MobileNetV3-Large: a hard-swish stem, 15 bneck blocks (some with SE), 1x1 conv, MLP.

    Weights keys:

    - ``'imagenet'``: torchvision's mobilenet_v3_large-8738ca79.pth, acc@1 74.042;
    - ``'imagenet_v2'``: torchvision's mobilenet_v3_large-5c1a4163.pth (new recipe,
      resize 232), acc@1 75.274.

    Args:
        n_class (int or None): classes; None takes the weights' (1000 without weights).
        pretrained_model (str or None): a weights key, a local file or None.
        source (str or None): name mapping of a local file (``'torchvision'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).
        fc_kwargs (dict or None): arguments of both Linear layers (default N(0, 0.01)).

    >>> model = MobileNetV3Large(n_class=10)
    >>> model.pick = ('expanded_conv_5', 'expanded_conv_11', 'conv1')
    """

    head_name = 'fc2'

    def __init__(self, n_class=None, pretrained_model=None, *, source=None, initialW=None,
                 fc_kwargs=None):
        super().__init__()
        if pretrained_model:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero()
        self.fc_kwargs = dict(fc_kwargs or {})
        self.fc_kwargs.setdefault('initialW', initializers.Normal(0.01))
        n_out = image_classifier.n_class_for(type(self), pretrained_model, n_class, 1000)
        with self.init_scope():
            self._build(n_out, initialW or initializers.HeNormal(fan_option='fan_out'))
        self._load_pretrained(pretrained_model, n_class, source)

    def _build(self, n_class, initialW):
        conv = functools.partial(L.Conv2DBNActiv, initialW=initialW, activ=F.hard_swish,
                                 bn_kwargs=_BN_KWARGS)
        self.conv = conv(3, _STEM, 3, 2, 1)
        in_channels = _STEM
        for name, (ksize, expanded, out, se, activ, stride) in zip(BLOCK_NAMES, _LARGE):
            se_channels = blocks.make_divisible(expanded // 4) if se else None
            setattr(self, name, blocks.ExpandedConv2D(
                in_channels, expanded, out, ksize=ksize, stride=stride,
                activ=_ACTIVATIONS[activ], se_channels=se_channels, initialW=initialW,
                bn_kwargs=_BN_KWARGS))
            in_channels = out
        self.conv1 = conv(in_channels, _LAST_CONV, 1)
        self.pool = functools.partial(F.mean, axis=(2, 3))
        self.fc1 = L.Linear(_LAST_CONV, _N_FEATURE, **self.fc_kwargs)
        self.fc1_activ = F.hard_swish
        self.dropout = functools.partial(F.dropout, ratio=0.2)
        self.fc2 = L.Linear(_N_FEATURE, n_class, **self.fc_kwargs)

    def reset_head(self, n_class):
        """Replace ``fc2`` by a new Linear(1280, n_class)."""
        delattr(self, 'fc2')
        with self.init_scope():
            self.fc2 = L.Linear(_N_FEATURE, n_class, **self.fc_kwargs)
        self.fc2.to_device(self.device)

    def convert_weights(self, raw, source):
        """Map a torchvision- or cvzoo-named file to cvzoo's names (zoo hook)."""
        return name_mapping.convert(raw, source, torchvision_table(),
                                    'MobileNetV3-Large weights')


def torchvision_table():
    """torchvision ``mobilenet_v3_large`` module paths -> (cvzoo path, kind).

    ``features.0`` is the stem, ``features.1`` ... ``features.15`` the blocks (each a
    ``block`` Sequential: [expand,] depthwise, [SE with ``fc1``/``fc2``,] projection),
    ``features.16`` the last 1x1 conv, ``classifier.0`` and ``classifier.3`` the Linears.
    """
    table = {}
    name_mapping.conv_bn(table, 'features.0', 'conv')
    in_channels = _STEM
    for i, (name, (_, expanded, out, se, _, _)) in enumerate(zip(BLOCK_NAMES, _LARGE), 1):
        stages = (('expand',) if expanded != in_channels else ()) + ('depthwise',)
        stages += (('se',) if se else ()) + ('project',)
        for j, stage in enumerate(stages):
            prefix = f'features.{i}.block.{j}'
            if stage == 'se':
                table[f'{prefix}.fc1'] = (f'{name}/se/down', 'conv')
                table[f'{prefix}.fc2'] = (f'{name}/se/up', 'conv')
            else:
                name_mapping.conv_bn(table, prefix, f'{name}/{stage}')
        in_channels = out
    name_mapping.conv_bn(table, 'features.16', 'conv1')
    table['classifier.0'] = ('fc1', 'linear')
    table['classifier.3'] = ('fc2', 'linear')
    return table


MobileNetV3Large.weights = {
    'imagenet': imagenet_presets.torchvision_entry('mobilenet_v3_large-8738ca79.pth', 74.042,
                                                   page='mobilenet_v3_large'),
    'imagenet_v2': imagenet_presets.torchvision_entry('mobilenet_v3_large-5c1a4163.pth', 75.274,
                                                      page='mobilenet_v3_large', v2=True),
}
