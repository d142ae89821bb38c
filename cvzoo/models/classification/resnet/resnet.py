"""ResNet-50/101/152 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016).

Two arrangements of the same parameters exist in published weights:

- ``arch='fb'``: the stride of a projecting block sits in its 3x3 convolution, as in
  torchvision, fb.resnet.torch and Goyal et al. (2017);
- ``arch='he'``: the stride sits in the first 1x1 convolution, as in the original Caffe
  release (whose ResNet-50 also has a bias in ``conv1``).

``compat`` picks the numerical details of the framework the weights come from:
``'torchvision'`` pads ``pool1`` by 1 and uses BN eps 1e-5; ``'chainercv'`` (also the
Caffe models) does not pad ``pool1``, lets its last window hang over the edge
(``cover_all``) and uses BN eps 2e-5. The output sizes are the same at 224x224.
"""

import functools
import typing

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier
from cvzoo.models.classification.resnet import name_mapping
from cvzoo.models.common import imagenet_presets, resnet_blocks

ARCHS = ('fb', 'he')
COMPATS = ('torchvision', 'chainercv')
_BN_EPS = {'torchvision': 1e-5, 'chainercv': 2e-5}
_POOL1 = {'torchvision': {'pad': 1, 'cover_all': False},
          'chainercv': {'pad': 0, 'cover_all': True}}
# The arrangement each weights key of the ResNet family needs.
KEY_ARCHS = {'imagenet': 'fb', 'imagenet_v2': 'fb', 'imagenet_chainercv': 'fb',
             'imagenet_he': 'he'}


def _entry_compat(entry):
    return 'chainercv' if entry.source_format == 'chainercv_npz' else 'torchvision'


class ResNet(image_classifier.ImageClassifier):
    """Base class of the bottleneck ResNets (and of ResNeXt and SENet).

    Layers (all pickable): ``conv1, pool1, res2, res3, res4, res5, pool5, fc6``; ``res5``
    is (B, 2048, H/32, W/32) and ``fc6`` the (B, n_class) logits.

    Args:
        n_layer (int): 50, 101 or 152.
        n_class (int or None): classes; None takes the weights' (1000 without weights).
            A different number loads everything but ``fc6``, which is made anew.
        pretrained_model (str or None): a weights key of the class, a local file or None.
        arch (str or None): ``'fb'`` or ``'he'`` (see the module docstring); None takes
            the one the weights key needs, else ``'fb'``. A key fixes its arch: a
            different value raises ValueError.
        compat (str or None): ``'torchvision'`` or ``'chainercv'``; None follows the
            weights (``'chainercv'`` for ``arch='he'`` and for ChainerCV files).
        source (str or None): name mapping of a local file (``'torchvision'``,
            ``'chainercv'``, ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions (default He normal, fan out).
        fc_kwargs (dict or None): arguments of the ``fc6`` Linear.
    """

    head_name = 'fc6'
    _blocks: typing.ClassVar[dict] = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}
    _mid_channels = (64, 128, 256, 512)
    _groups = 1
    _add_seblock = False
    _conv1_bias_layers = (50,)  # Caffe's ResNet-50 (arch='he') has a bias in conv1
    _fixed_arch = None  # SENet: the one arch its weights have (its default compat: chainercv)

    def __init__(self, n_layer, n_class=None, pretrained_model=None, arch=None, *,
                 compat=None, source=None, initialW=None, fc_kwargs=None):
        if n_layer not in self._blocks:
            raise ValueError(f'n_layer: expected one of {sorted(self._blocks)}, got {n_layer!r}')
        arch, compat = self._resolve_layout(pretrained_model, arch, compat, source)
        super().__init__()
        self.arch, self.compat = arch, compat
        if pretrained_model:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero()
        self.fc_kwargs = dict(fc_kwargs or {})
        self.fc_kwargs.setdefault('initialW', initializers.Normal(0.01))
        n_out = image_classifier.n_class_for(type(self), pretrained_model, n_class, 1000)
        with self.init_scope():
            self._build(n_layer, n_out, initialW or initializers.HeNormal(fan_option='fan_out'))
        self._load_pretrained(pretrained_model, n_class, source)

    def _build(self, n_layer, n_class, initialW):
        bn_kwargs = {'eps': _BN_EPS[self.compat]}
        conv1_bias = self.arch == 'he' and n_layer in self._conv1_bias_layers
        self.conv1 = L.Conv2DBNActiv(3, 64, 7, 2, 3, nobias=not conv1_bias, initialW=initialW,
                                     bn_kwargs=bn_kwargs)
        self.pool1 = functools.partial(F.max_pooling_2d, ksize=3, stride=2,
                                       **_POOL1[self.compat])
        kwargs = {'initialW': initialW, 'bn_kwargs': bn_kwargs, 'groups': self._groups,
                  'stride_first': self.arch == 'he', 'add_seblock': self._add_seblock}
        in_channels = 64
        for stage, (n_block, mid) in enumerate(zip(self._blocks[n_layer], self._mid_channels)):
            out_channels = 256 * 2 ** stage
            stage_block = resnet_blocks.ResBlock(n_block, in_channels, mid, out_channels,
                                                 1 if stage == 0 else 2, **kwargs)
            setattr(self, f'res{stage + 2}', stage_block)
            in_channels = out_channels
        self.pool5 = functools.partial(F.mean, axis=(2, 3))
        self.fc6 = L.Linear(2048, n_class, **self.fc_kwargs)

    @classmethod
    def _resolve_layout(cls, pretrained_model, arch, compat, source):
        """(arch, compat) from the arguments, the class and the weights key; checked."""
        entry = getattr(cls, 'weights', {}).get(pretrained_model) \
            if isinstance(pretrained_model, str) else None
        needed = cls._fixed_arch or (KEY_ARCHS[pretrained_model] if entry else None)
        if cls._fixed_arch and arch not in (None, cls._fixed_arch):
            raise ValueError(f'arch: {cls.__name__} exists only with arch={needed!r} (the '
                             f'arrangement of its weights), got arch={arch!r}')
        if needed is not None and arch not in (None, needed):
            others = sorted(k for k, a in KEY_ARCHS.items() if a == arch and k in cls.weights)
            raise ValueError(f'arch: weights {pretrained_model!r} of {cls.__name__} need '
                             f'arch={needed!r}, got '
                             f'arch={arch!r}; keys for arch={arch!r}: {others}')
        arch = arch or needed or 'fb'
        if arch not in ARCHS:
            raise ValueError(f'arch: expected one of {ARCHS}, got {arch!r}')
        if compat is None and entry is not None:
            compat = _entry_compat(entry)
        if compat is None:
            chainercv = cls._fixed_arch or arch == 'he' or source == 'chainercv'
            compat = 'chainercv' if chainercv else 'torchvision'
        if compat not in COMPATS:
            raise ValueError(f'compat: expected one of {COMPATS}, got {compat!r}')
        return arch, compat

    def reset_head(self, n_class):
        """Replace ``fc6`` by a new Linear(2048, n_class)."""
        delattr(self, 'fc6')
        with self.init_scope():
            self.fc6 = L.Linear(2048, n_class, **self.fc_kwargs)
        self.fc6.to_device(self.device)

    def convert_weights(self, raw, source):
        """Map a torchvision- or ChainerCV-named file to cvzoo's names (zoo hook)."""
        return name_mapping.convert_resnet(raw, source)


_HE_NOTE = ("Caffe model of He et al. converted by ChainerCV (arch='he'); "
            'ChainerCV reports its score with the OpenCV resize.')
_FB_CHAINERCV_NOTE = ("trained by ChainerCV following Goyal et al. (arch='fb', pool1 "
                      'without padding); ChainerCV reports its score with the OpenCV resize.')


@zoo.register('resnet50', task='classification')
class ResNet50(ResNet):
    """ResNet-50. Weights keys (arch each needs):

    - ``'imagenet'`` (default, 'fb'): torchvision IMAGENET1K_V1, acc@1 76.130;
    - ``'imagenet_v2'`` ('fb'): torchvision IMAGENET1K_V2, acc@1 80.858 (resize 232);
    - ``'imagenet_he'`` ('he'): ChainerCV's conversion of the Caffe model, error 24.8 %;
    - ``'imagenet_chainercv'`` ('fb'): trained by ChainerCV, error 23.51 %.

    Other arguments as in :class:`ResNet`.

    >>> model = ResNet50(n_class=10)
    >>> model.pick = ('res4', 'res5')
    """

    def __init__(self, n_class=None, pretrained_model=None, arch=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, arch, **kwargs)


@zoo.register('resnet101', task='classification')
class ResNet101(ResNet):
    """ResNet-101. Weights keys as for :class:`ResNet50`: ``'imagenet'`` (torchvision V1,
    77.374), ``'imagenet_v2'`` (81.886), ``'imagenet_he'`` (error 23.6 %),
    ``'imagenet_chainercv'`` (error 22.07 %)."""

    def __init__(self, n_class=None, pretrained_model=None, arch=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, arch, **kwargs)


@zoo.register('resnet152', task='classification')
class ResNet152(ResNet):
    """ResNet-152. Weights keys as for :class:`ResNet50`: ``'imagenet'`` (torchvision V1,
    78.312), ``'imagenet_v2'`` (82.284), ``'imagenet_he'`` (error 23.2 %),
    ``'imagenet_chainercv'`` (error 21.67 %)."""

    def __init__(self, n_class=None, pretrained_model=None, arch=None, **kwargs):
        super().__init__(152, n_class, pretrained_model, arch, **kwargs)


def _resnet_weights(n_layer, torchvision, he_error, chainercv_error):
    (v1_file, v1_top1), (v2_file, v2_top1) = torchvision
    return {
        'imagenet': imagenet_presets.torchvision_entry(v1_file, v1_top1, page='resnet'),
        'imagenet_v2': imagenet_presets.torchvision_entry(v2_file, v2_top1, page='resnet',
                                                          v2=True),
        'imagenet_he': imagenet_presets.chainercv_entry(
            f'resnet{n_layer}_imagenet_converted_2018_03_07.npz', he_error[0],
            original=f'{he_error[1]} %, He et al. 2016', notes=_HE_NOTE),
        'imagenet_chainercv': imagenet_presets.chainercv_entry(
            f'resnet{n_layer}_imagenet_trained_2018_11_26.npz', chainercv_error[0],
            original=f'{chainercv_error[1]}, Goyal et al. 2017', notes=_FB_CHAINERCV_NOTE),
    }


ResNet50.weights = _resnet_weights(
    50, (('resnet50-0676ba61.pth', 76.130), ('resnet50-11ad3fa6.pth', 80.858)),
    (24.8, 24.7), (23.51, '23.60 %'))
ResNet101.weights = _resnet_weights(
    101, (('resnet101-63fe2227.pth', 77.374), ('resnet101-cd907fc2.pth', 81.886)),
    (23.6, 23.6), (22.07, '22.08 %'))
ResNet152.weights = _resnet_weights(
    152, (('resnet152-394f9c45.pth', 78.312), ('resnet152-f82ba261.pth', 82.284)),
    (23.2, 23.0), (21.67, 'not reported'))
