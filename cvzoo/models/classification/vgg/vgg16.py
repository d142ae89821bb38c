"""VGG16 (Simonyan and Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
Recognition", ICLR 2015), with ChainerCV's layer names.

Layers (all pickable): ``conv1_1, conv1_2, pool1, conv2_1, ..., conv5_3, pool5, fc6,
fc6_relu, fc6_dropout, fc7, fc7_relu, fc7_dropout, fc8``. ``pool5`` ends with an
adaptive average pooling to 7x7 as in torchvision (the identity for 224x224 input), so
that any input of at least 32x32 fits ``fc6``.

``compat`` follows the framework of the weights: with ``'torchvision'`` the 2x2 max
poolings drop an odd last row or column; with ``'chainercv'`` (ChainerCV's files) they
keep it as a window hanging over the edge (``cover_all``), so a 200x200 input reaches
fc6 at 7x7 as in ChainerCV instead of 6x6. The two agree when the sides are multiples of
32, e.g. 224.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier
from cvzoo.models.common import conv2d_activ, foreign_names, imagenet_presets

# (stage, channels, convolutions)
_STAGES = ((1, 64, 2), (2, 128, 2), (3, 256, 3), (4, 512, 3), (5, 512, 3))
CONV_NAMES = tuple(f'conv{s}_{i}' for s, _, n in _STAGES for i in range(1, n + 1))
# torchvision's features.<index> of each convolution, and classifier.<index> of each fc
_TORCHVISION_CONV_INDEX = (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)
_TORCHVISION_FC_INDEX = {'0': 'fc6', '3': 'fc7', '6': 'fc8'}
CHAINERCV_MEAN = (123.68, 116.779, 103.939)
COMPATS = ('torchvision', 'chainercv')


def _adaptive_average_pooling_7x7(x):
    """torchvision's AdaptiveAvgPool2d((7, 7)): bin i spans [floor(iH/7), ceil((i+1)H/7))."""
    H, W = x.shape[2:]
    if (H, W) == (7, 7):
        return x
    rows = []
    for i in range(7):  # NOTE: 49 bins at most; the input is tiny at this depth
        y_slice = slice(i * H // 7, -(-(i + 1) * H // 7))
        cells = [F.mean(x[:, :, y_slice, j * W // 7:-(-(j + 1) * W // 7)], axis=(2, 3))
                 for j in range(7)]
        rows.append(F.stack(cells, axis=2))
    return F.stack(rows, axis=2)


def _pool5(x, cover_all):
    return _adaptive_average_pooling_7x7(F.max_pooling_2d(x, 2, 2, cover_all=cover_all))


@zoo.register('vgg16', task='classification')
class VGG16(image_classifier.ImageClassifier):
    """VGG16 with 13 convolutions (each followed by ReLU) and three fully connected layers.

    Weights keys:

    - ``'imagenet'`` (default): torchvision's vgg16-397923af.pth, acc@1 71.592;
    - ``'imagenet_chainercv'``: ChainerCV's conversion of the authors' Caffe model,
      top-1 error 29.0 % (paper 28.5 %).

    Args:
        n_class (int or None): classes; None takes the weights' (1000 without weights).
        pretrained_model (str or None): a weights key, a local file or None.
        source (str or None): name mapping of a local file (``'torchvision'``,
            ``'chainercv'``, ``'cvzoo'``); None guesses from the file's format.
        compat (str or None): ``'torchvision'`` or ``'chainercv'`` poolings (see the
            module docstring); None follows the weights (``'chainercv'`` for the
            ``'imagenet_chainercv'`` key and for ``source='chainercv'``).
        initialW: initializer of all weights (default N(0, 0.01), as in the paper).
        initial_bias: initializer of all biases (default 0).

    >>> model = VGG16(n_class=10)
    >>> model.pick = 'conv5_3'
    """

    head_name = 'fc8'

    def __init__(self, n_class=None, pretrained_model=None, *, source=None, compat=None,
                 initialW=None, initial_bias=None):
        super().__init__()
        self.compat = self._resolve_compat(pretrained_model, source, compat)
        if pretrained_model:  # NOTE: zeros are cheaper than random numbers about to be replaced
            initialW = initializers.Zero()
        self._init_kwargs = {'initialW': initialW or initializers.Normal(0.01),
                             'initial_bias': initial_bias}
        n_out = image_classifier.n_class_for(type(self), pretrained_model, n_class, 1000)
        with self.init_scope():
            self._build(n_out)
        self._load_pretrained(pretrained_model, n_class, source)

    def _build(self, n_class):
        in_channels = 3
        for stage, channels, n_conv in _STAGES:
            for i in range(1, n_conv + 1):
                setattr(self, f'conv{stage}_{i}', conv2d_activ.Conv2DActiv(
                    in_channels, channels, 3, 1, 1, **self._init_kwargs))
                in_channels = channels
            cover_all = self.compat == 'chainercv'
            pool = functools.partial(_pool5, cover_all=cover_all) if stage == 5 else \
                functools.partial(F.max_pooling_2d, ksize=2, stride=2, cover_all=cover_all)
            setattr(self, f'pool{stage}', pool)
        self.fc6 = L.Linear(512 * 7 * 7, 4096, **self._init_kwargs)
        self.fc6_relu = F.relu
        self.fc6_dropout = F.dropout
        self.fc7 = L.Linear(4096, 4096, **self._init_kwargs)
        self.fc7_relu = F.relu
        self.fc7_dropout = F.dropout
        self.fc8 = L.Linear(4096, n_class, **self._init_kwargs)

    @classmethod
    def _resolve_compat(cls, pretrained_model, source, compat):
        """``compat`` as given, else the one of the weights' framework; checked."""
        if compat is None:
            entry = cls.weights.get(pretrained_model) if isinstance(pretrained_model, str) \
                else None
            chainercv = entry.source_format == 'chainercv_npz' if entry is not None \
                else source == 'chainercv'
            compat = 'chainercv' if chainercv else 'torchvision'
        if compat not in COMPATS:
            raise ValueError(f'compat: expected one of {COMPATS}, got {compat!r}')
        return compat

    def reset_head(self, n_class):
        """Replace ``fc8`` by a new Linear(4096, n_class)."""
        delattr(self, 'fc8')
        with self.init_scope():
            self.fc8 = L.Linear(4096, n_class, **self._init_kwargs)
        self.fc8.to_device(self.device)

    def convert_weights(self, raw, source):
        """Map a torchvision- or ChainerCV-named file to cvzoo's names (zoo hook)."""
        return convert_vgg16(raw, source)


def _map_torchvision_key(key):
    part, index, leaf = key.split('.') if key.count('.') == 2 else (key, '', '')
    leaf_name = {'weight': 'W', 'bias': 'b'}[leaf] if leaf in ('weight', 'bias') else None
    if part == 'features' and leaf_name and index.isdigit() \
            and int(index) in _TORCHVISION_CONV_INDEX:
        return f'{CONV_NAMES[_TORCHVISION_CONV_INDEX.index(int(index))]}/conv/{leaf_name}'
    if part == 'classifier' and leaf_name and index in _TORCHVISION_FC_INDEX:
        return f'{_TORCHVISION_FC_INDEX[index]}/{leaf_name}'
    raise KeyError(key)


def convert_vgg16(raw, source):
    """Map VGG16 weights to cvzoo's names.

    torchvision: ``features.{0,2,5,...,28}.{weight,bias}`` -> ``conv1_1 ... conv5_3``
    ``/conv/{W,b}``; ``classifier.{0,3,6}`` -> ``fc6, fc7, fc8``. ChainerCV's names are
    cvzoo's (a leading '/' is dropped).

    Raises:
        ValueError: an unknown ``source``.
        cvzoo.errors.WeightLoadError: file keys the mapping does not know.
    """
    if source in foreign_names.TORCH_SOURCES:
        return foreign_names.map_keys(raw, _map_torchvision_key, source, 'VGG16 weights')
    if source in ('chainercv', 'cvzoo'):
        return {foreign_names.strip_root(k): v for k, v in raw.items()}
    raise ValueError(f"source: expected 'torchvision', 'torch', 'chainercv' or 'cvzoo' for "
                     f'VGG16 weights, got {source!r}')


VGG16.weights = {
    'imagenet': imagenet_presets.torchvision_entry('vgg16-397923af.pth', 71.592, page='vgg'),
    'imagenet_chainercv': imagenet_presets.chainercv_entry(
        'vgg16_imagenet_converted_2017_07_18.npz', 29.0, original='28.5 %, Simonyan and '
        'Zisserman 2015', preset=zoo.Preset(size=224, mean=CHAINERCV_MEAN,
                                            resize_backend='cv2', crop_fraction=0.875),
        notes="Caffe model of the authors converted by ChainerCV; ChainerCV's VGG16 has no "
              'adaptive pooling (the same at 224x224).'),
}
