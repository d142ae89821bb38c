"""SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x
fewer parameters and <0.5MB model size", arXiv:1602.07360, 2016), laid out as
torchvision's ``squeezenet1_0`` / ``squeezenet1_1``. Version 1.1 is the DeepScale
repository's revision (github.com/DeepScale/SqueezeNet, SqueezeNet_v1.1): a 3x3 stem of
64 channels and earlier pooling, 2.4x less computation at the same accuracy.

Layers (all pickable), named after the paper's Table 1: ``conv1, relu1, pool1,
fire2 ... fire9`` with max pooling after fire4 and fire8 (``pool4``, ``pool8``; v1.1:
after fire3 and fire5, ``pool3``, ``pool5``), ``dropout``, ``conv10`` (1x1 to
n_class), ``relu10`` and ``pool10`` (global average: the (B, n_class) logits, which
are >= 0 as in the original). Max pooling rounds its output size up (Caffe's and
torchvision's ``ceil_mode``), which is ``cover_all=True`` here.
"""

import functools
import typing

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier
from cvzoo.models.classification.squeezenet import fire
from cvzoo.models.common import foreign_names, imagenet_presets

# The preprocessing of /work/shared/data/weights/squeezenet1_1_deepscale.pth (the DeepScale
# Caffe model in torchvision's layout, first convolution flipped to RGB): RGB, the whole
# image resized to 227x227 (bilinear), minus the Caffe mean, no scaling. That file has no
# public URL, so it is not a zoo key: load it by path, then set ``model.preset``.
DEEPSCALE_PRESET = zoo.Preset(size=227, mean=(123.0, 117.0, 104.0), std=(1.0, 1.0, 1.0),
                              interpolation='bilinear', resize_backend='pil',
                              crop_fraction=None)
_POOL = functools.partial(F.max_pooling_2d, ksize=3, stride=2, pad=0, cover_all=True)


class SqueezeNet(image_classifier.ImageClassifier):
    """Base class of the two SqueezeNets; a subclass sets the layer plan below.

    Args:
        n_class (int or None): classes; None takes the weights' (1000 without weights).
        pretrained_model (str or None): a weights key, a local file or None.
        source (str or None): name mapping of a local file (``'torchvision'`` or
            ``'cvzoo'``); None guesses it from the file's format.
        initialW: initializer of the convolutions but conv10 (default He normal; torchvision
            draws He uniform).
        conv10_initialW: initializer of conv10 (default N(0, 0.01), as torchvision).
    """

    head_name = 'conv10'
    _stem = (96, 7)  # (channels, kernel) of conv1
    # ('fire', (in, squeeze, expand1x1, expand3x3)) or ('pool', None), after pool1
    _plan = ()
    # cvzoo layer -> its index in torchvision's ``features``
    _torchvision_index: typing.ClassVar[dict] = {}

    def __init__(self, n_class=None, pretrained_model=None, *, source=None, initialW=None,
                 conv10_initialW=None):
        super().__init__()
        if pretrained_model:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero()
        self._conv10_initialW = conv10_initialW or initializers.Normal(0.01)
        n_out = image_classifier.n_class_for(type(self), pretrained_model, n_class, 1000)
        with self.init_scope():
            self._build(n_out, initialW or initializers.HeNormal())
        self._load_pretrained(pretrained_model, n_class, source)

    def _build(self, n_class, initialW):
        channels, ksize = self._stem
        self.conv1 = L.Convolution2D(3, channels, ksize, 2, initialW=initialW)
        self.relu1 = F.relu
        self.pool1 = _POOL
        for name, args in self._plan:
            setattr(self, name, fire.Fire(*args, initialW=initialW) if args else _POOL)
        self.dropout = functools.partial(F.dropout, ratio=0.5)
        self.conv10 = L.Convolution2D(512, n_class, 1, initialW=self._conv10_initialW)
        self.relu10 = F.relu
        self.pool10 = functools.partial(F.mean, axis=(2, 3))

    def reset_head(self, n_class):
        """Replace ``conv10`` by a new 1x1 Convolution2D(512, n_class)."""
        # NOTE: conv10 is not the last layer; re-assigning keeps its place in the order.
        with self.init_scope():
            self.conv10 = L.Convolution2D(512, n_class, 1, initialW=self._conv10_initialW)
        self.conv10.to_device(self.device)

    def _map_torchvision_key(self, key):
        parts = key.split('.')
        leaf = {'weight': 'W', 'bias': 'b'}[parts[-1]]
        if parts[:2] == ['classifier', '1'] and len(parts) == 3:
            return f'conv10/{leaf}'
        names = {str(i): name for name, i in self._torchvision_index.items()}
        if parts[0] != 'features' or parts[1] not in names:
            raise KeyError(key)
        name = names[parts[1]]
        if name == 'conv1' and len(parts) == 3:
            return f'conv1/{leaf}'
        if name != 'conv1' and len(parts) == 4 and parts[2] in ('squeeze', 'expand1x1',
                                                                 'expand3x3'):
            return f'{name}/{parts[2]}/{leaf}'
        raise KeyError(key)

    def convert_weights(self, raw, source):
        """Map a torchvision- or cvzoo-named file to cvzoo's names (zoo hook).

        torchvision: ``features.<i>.weight`` (conv1), ``features.<i>.{squeeze,expand1x1,
        expand3x3}.{weight,bias}`` (fire modules) and ``classifier.1`` (conv10).
        """
        kind = f'{type(self).__name__} weights'
        if source in foreign_names.TORCH_SOURCES:
            return foreign_names.map_keys(raw, self._map_torchvision_key, source, kind)
        if source == 'cvzoo':
            return {foreign_names.strip_root(k): v for k, v in raw.items()}
        raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo' for {kind}, "
                         f'got {source!r}')


@zoo.register('squeezenet1_0', task='classification')
class SqueezeNet1_0(SqueezeNet):  # torchvision's name
    """SqueezeNet 1.0: a 7x7 stem of 96 channels, pooling after conv1, fire4 and fire8.

    Weights keys: ``'imagenet'``, torchvision's squeezenet1_0-b66bff10.pth (acc@1 58.092).
    Arguments as :class:`SqueezeNet`.

    >>> model = SqueezeNet1_0(n_class=10)
    >>> model.pick = ('fire4', 'fire8')
    """

    _stem = (96, 7)
    _plan = (('fire2', (96, 16, 64, 64)), ('fire3', (128, 16, 64, 64)),
             ('fire4', (128, 32, 128, 128)), ('pool4', None), ('fire5', (256, 32, 128, 128)),
             ('fire6', (256, 48, 192, 192)), ('fire7', (384, 48, 192, 192)),
             ('fire8', (384, 64, 256, 256)), ('pool8', None), ('fire9', (512, 64, 256, 256)))
    _torchvision_index: typing.ClassVar[dict] = {
        'conv1': 0, 'fire2': 3, 'fire3': 4, 'fire4': 5, 'fire5': 7, 'fire6': 8, 'fire7': 9,
        'fire8': 10, 'fire9': 12}


@zoo.register('squeezenet1_1', task='classification')
class SqueezeNet1_1(SqueezeNet):  # torchvision's name
    """SqueezeNet 1.1: a 3x3 stem of 64 channels, pooling after conv1, fire3 and fire5.

    Weights keys: ``'imagenet'``, torchvision's squeezenet1_1-b8a52dc0.pth (acc@1 58.178).
    The DeepScale Caffe weights converted to torchvision's layout load by path with
    ``source='torchvision'``; then set ``model.preset = DEEPSCALE_PRESET``.
    Arguments as :class:`SqueezeNet`.

    >>> model = SqueezeNet1_1(n_class=10)
    >>> model.pick = ('fire5', 'fire9')
    """

    _stem = (64, 3)
    _plan = (('fire2', (64, 16, 64, 64)), ('fire3', (128, 16, 64, 64)), ('pool3', None),
             ('fire4', (128, 32, 128, 128)), ('fire5', (256, 32, 128, 128)), ('pool5', None),
             ('fire6', (256, 48, 192, 192)), ('fire7', (384, 48, 192, 192)),
             ('fire8', (384, 64, 256, 256)), ('fire9', (512, 64, 256, 256)))
    _torchvision_index: typing.ClassVar[dict] = {
        'conv1': 0, 'fire2': 3, 'fire3': 4, 'fire4': 6, 'fire5': 7, 'fire6': 9, 'fire7': 10,
        'fire8': 11, 'fire9': 12}


SqueezeNet1_0.weights = {
    'imagenet': imagenet_presets.torchvision_entry('squeezenet1_0-b66bff10.pth', 58.092,
                                                   page='squeezenet1_0'),
}
SqueezeNet1_1.weights = {
    'imagenet': imagenet_presets.torchvision_entry('squeezenet1_1-b8a52dc0.pth', 58.178,
                                                   page='squeezenet1_1'),
}
