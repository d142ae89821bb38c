"""The layers of a Darknet cfg: one builder per section kind, and their forward passes.

Each builder reads one section's options (strings, as ``parse_darknet_cfg`` gives them)
and returns a layer: a :class:`DarknetConvolution` link for ``[convolutional]`` and a
small parameter-free :class:`CfgLayer` for the rest. Every layer is called as
``layer(x, outputs)`` where ``outputs`` holds the outputs of all earlier layers, by
cfg index (sections after ``[net]`` counted from 0, ``[dropout]`` included). Builders
get ``channels``, a dict of output channels by layer index where -1 is the input image.
"""

import dataclasses

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core.config import config
from cvzoo.models.detection.darknet import reorg


def _softplus(x):
    # NOTE: relu(x) + log(1 + exp(-|x|)) never overflows, unlike log(1 + exp(x)).
    return F.relu(x) + F.log(1 + F.exp(-F.absolute(x)))


ACTIVATIONS = {
    'linear': lambda x: x,
    'leaky': lambda x: F.leaky_relu(x, 0.1),
    'relu': F.relu,
    'logistic': F.sigmoid,
    'swish': lambda x: x * F.sigmoid(x),
    'mish': lambda x: x * F.tanh(_softplus(x)),
}


def ints(options, key, default=None):
    """A comma-separated int list option (``'-1, 8'`` -> [-1, 8])."""
    value = options.get(key)
    if value is None:
        return default
    return [int(v) for v in value.split(',') if v.strip()]


def floats(options, key, default=None):
    """A comma-separated float list option."""
    value = options.get(key)
    if value is None:
        return default
    return [float(v) for v in value.split(',') if v.strip()]


# Darknet's cfgs upsample by 2 (a few by 4); a larger factor only multiplies the memory of
# every later layer.
MAX_UPSAMPLE = 32

# Options that change what a layer computes and that CfgNetwork does not implement, with
# the value that means "off".
_UNSUPPORTED = {
    'convolutional': {'dilation': '1', 'binary': '0', 'xnor': '0', 'share_index': None,
                      'antialiasing': '0', 'deform': '0', 'stretch': '0'},
    'maxpool': {'maxpool_depth': '0', 'antialiasing': '0'},
    'shortcut': {'weights_type': 'none'},
}


def refuse_unsupported(kind, options, where):
    """Raise when a section turns on an option CfgNetwork does not implement."""
    for key, off in _UNSUPPORTED.get(kind, {}).items():
        if key in options and options[key] != off:
            raise errors.CorruptFileError(f'{where}: {key}={options[key]} is not supported')
    for key in ('stride_x', 'stride_y'):
        if key in options and options[key] != options.get('stride', '1'):
            raise errors.CorruptFileError(f'{where}: {key} differing from stride is not '
                                          'supported')


def _activation(options, where):
    name = options.get('activation', 'logistic')
    if name not in ACTIVATIONS:
        raise errors.CorruptFileError(f'{where}: activation={name!r} is not supported; '
                                      f'expected one of {sorted(ACTIVATIONS)}')
    return name


class DarknetConvolution(L.Chain):
    """A ``[convolutional]`` section: convolution, optional batch norm, activation.

    Args:
        in_channels (int): input channels.
        out_channels (int): ``filters``.
        ksize, stride, pad, groups (int): as the cfg gives them (pad in pixels).
        batch_normalize (bool): with BN the convolution has no bias (Darknet's bias is
            then BN's beta); BN uses Darknet's eps 1e-5 inside the square root.
        activation (str): a key of ``ACTIVATIONS``.
    """

    def __init__(self, in_channels, out_channels, ksize, stride=1, pad=0, *, groups=1,
                 batch_normalize=False, activation='linear'):
        super().__init__()
        self.activation = activation
        self.batch_normalize = batch_normalize
        with self.init_scope():
            self.conv = L.Convolution2D(in_channels, out_channels, ksize, stride, pad,
                                        nobias=batch_normalize, groups=groups)
            if batch_normalize:
                self.bn = L.BatchNormalization(out_channels, eps=1e-5)

    def forward(self, x, outputs=None):
        if self.batch_normalize and not config.train:
            return ACTIVATIONS[self.activation](self._fused_convolution(x))
        h = self.conv(x)
        if self.batch_normalize:
            h = self.bn(h)
        return ACTIVATIONS[self.activation](h)

    def _fused_convolution(self, x):
        """Convolution with batch norm folded into W and b, as Darknet's inference does."""
        # NOTE: fuse_conv_batchnorm (network.c) folds BN before `detector test`; one
        # pass over the feature map instead of two, and still differentiable.
        conv, bn = self.conv, self.bn
        dtype = conv.W.dtype.type
        scale = bn.gamma * (bn.avg_var + dtype(bn.eps)) ** dtype(-0.5)
        W = conv.W * F.reshape(scale, (-1, 1, 1, 1))
        b = bn.beta - scale * bn.avg_mean  # the Variable first, so its operator runs
        return F.convolution_2d(x, W, b, conv.stride, conv.pad, groups=conv.groups)

    def darknet_blocks(self):
        """(parameter path, shape) of each block, in the order of a ``.weights`` file."""
        W_shape = tuple(self.conv.W.shape)
        n = (W_shape[0],)
        if self.batch_normalize:
            return [('bn/beta', n), ('bn/gamma', n), ('bn/avg_mean', n), ('bn/avg_var', n),
                    ('conv/W', W_shape)]
        return [('conv/b', n), ('conv/W', W_shape)]


def positive_int(options, key, default, where):
    """An int option that must be >= 1 (a size, a count, a stride)."""
    value = int(options.get(key, default))
    if value < 1:
        raise errors.CorruptFileError(f'{where}: {key}={value}, expected an int >= 1')
    return value


def _convolution_options(options, in_channels, where):
    """(filters, size, stride, pad, groups) of a [convolutional] section, checked."""
    size = positive_int(options, 'size', 1, where)
    pad = size // 2 if int(options.get('pad', 0)) else int(options.get('padding', 0))
    groups = positive_int(options, 'groups', 1, where)
    filters = positive_int(options, 'filters', 1, where)
    if pad < 0 or in_channels % groups or filters % groups:
        raise errors.CorruptFileError(f'{where}: groups={groups} does not divide the '
                                      f'{in_channels} input channels and filters={filters}, '
                                      f'or padding={pad} is negative')
    return filters, size, positive_int(options, 'stride', 1, where), pad, groups


def convolution_parameters(options, in_channels, where):
    """How many parameters a [convolutional] section declares (counted before any is
    allocated)."""
    filters, size, _, _, groups = _convolution_options(options, in_channels, where)
    per_filter = in_channels // groups * size * size
    return filters * (per_filter + (4 if int(options.get('batch_normalize', 0)) else 1))


def build_convolutional(options, index, channels):
    """DarknetConvolution of a section; ``pad=1`` means size // 2, else ``padding``."""
    where = f'[convolutional] (layer {index})'
    in_channels = channels[index - 1]
    filters, size, stride, pad, groups = _convolution_options(options, in_channels, where)
    layer = DarknetConvolution(
        in_channels, filters, size, stride, pad, groups=groups,
        batch_normalize=bool(int(options.get('batch_normalize', 0))),
        activation=_activation(options, where))
    return layer, filters


@dataclasses.dataclass
class CfgLayer:
    """A parameter-free layer: ``kind`` selects the forward pass, the rest configures it."""

    kind: str
    sources: tuple = ()  # absolute indices of the layers read (route, shortcut)
    size: int = 1
    stride: int = 1
    padding: int = 0
    groups: int = 1
    group_id: int = 0
    activation: str = 'linear'
    head: dict = dataclasses.field(default_factory=dict)

    def __call__(self, x, outputs):
        return _FORWARDS[self.kind](self, x, outputs)


def _route(layer, x, outputs):
    parts = []
    for source in layer.sources:
        h = outputs[source]
        if layer.groups > 1:
            width = h.shape[1] // layer.groups
            h = h[:, layer.group_id * width:(layer.group_id + 1) * width]
        parts.append(h)
    return parts[0] if len(parts) == 1 else F.concat(parts, axis=1)


def _shortcut(layer, x, outputs):
    for source in layer.sources:
        x = x + outputs[source]
    return ACTIVATIONS[layer.activation](x)


def _maxpool(layer, x, outputs):
    # NOTE: Darknet pads size - 1 in total, padding // 2 before and the rest after, and
    # ignores the outside; padding with -inf gives the same maxima.
    before = layer.padding // 2
    after = layer.padding - before
    if layer.padding:
        x = F.pad(x, ((0, 0), (0, 0), (before, after), (before, after)),
                  constant_values=-numpy.inf)
    return F.max_pooling_2d(x, layer.size, layer.stride, 0, cover_all=False)


_FORWARDS = {
    'route': _route,
    'shortcut': _shortcut,
    'maxpool': _maxpool,
    'upsample': lambda layer, x, outputs: F.upsample_nearest_2d(x, layer.stride),
    'dropout': lambda layer, x, outputs: x,
    'yolo': lambda layer, x, outputs: x,
    'region': lambda layer, x, outputs: x,
}


def _absolute(indices, index, where):
    result = tuple(i + index if i < 0 else i for i in indices)
    if not result or not all(0 <= i < index for i in result):
        raise errors.CorruptFileError(f'{where}: layers {indices} must point to earlier '
                                      f'layers (0..{index - 1})')
    return result


def build_route(options, index, channels):
    where = f'[route] (layer {index})'
    sources = _absolute(ints(options, 'layers', []), index, where)
    groups = int(options.get('groups', 1))
    layer = CfgLayer('route', sources, groups=groups, group_id=int(options.get('group_id', 0)))
    if any(channels[i] % groups for i in sources) or not 0 <= layer.group_id < groups:
        raise errors.CorruptFileError(f'{where}: groups={groups}, group_id={layer.group_id} '
                                      f'do not split channels {[channels[i] for i in sources]}')
    return layer, sum(channels[i] for i in sources) // groups


def build_shortcut(options, index, channels):
    where = f'[shortcut] (layer {index})'
    sources = _absolute(ints(options, 'from', []), index, where)
    if any(channels[i] != channels[index - 1] for i in sources):
        raise errors.CorruptFileError(f'{where}: adds layers of {channels[index - 1]} and '
                                      f'{[channels[i] for i in sources]} channels')
    return CfgLayer('shortcut', sources, activation=_activation(
        {'activation': options.get('activation', 'linear')}, where)), channels[index - 1]


def build_maxpool(options, index, channels):
    where = f'[maxpool] (layer {index})'
    stride = positive_int(options, 'stride', 1, where)
    size = positive_int(options, 'size', stride, where)
    padding = int(options.get('padding', size - 1))
    return CfgLayer('maxpool', size=size, stride=stride, padding=padding), channels[index - 1]


def build_upsample(options, index, channels):
    stride = int(options.get('stride', 2))
    if not 1 <= stride <= MAX_UPSAMPLE or float(options.get('scale', 1)) != 1:
        raise errors.CorruptFileError(f'[upsample] (layer {index}): only stride 1 to '
                                      f'{MAX_UPSAMPLE} and scale=1 are supported, got '
                                      f'{options}')
    return CfgLayer('upsample', stride=stride), channels[index - 1]


def build_dropout(options, index, channels):
    return CfgLayer('dropout'), channels[index - 1]


def _head_options(options, kind, where):
    classes = int(options.get('classes', 20))
    anchors = numpy.array(floats(options, 'anchors', []), numpy.float32).reshape(-1, 2)
    num = int(options.get('num', len(anchors)))
    mask = ints(options, 'mask', list(range(num))) if kind == 'yolo' else list(range(num))
    if len(anchors) < num or any(not 0 <= m < len(anchors) for m in mask):
        raise errors.CorruptFileError(f'{where}: anchors {anchors.tolist()} do not cover '
                                      f'num={num}, mask={mask}')
    if int(options.get('new_coords', 0)) or int(options.get('coords', 4)) != 4:
        raise errors.CorruptFileError(f'{where}: new_coords=1 and coords != 4 are not '
                                      'supported')
    return {'kind': kind, 'n_class': classes, 'anchors': anchors[mask],
            'scale_x_y': float(options.get('scale_x_y', 1.0)), 'mask': tuple(mask),
            'all_anchors': anchors,
            'ignore_thresh': float(options.get('ignore_thresh', 0.5))}


def build_head(options, index, channels, kind):
    where = f'[{kind}] (layer {index})'
    head = _head_options(options, kind, where)
    expected = len(head['anchors']) * (5 + head['n_class'])
    if channels[index - 1] != expected:
        raise errors.CorruptFileError(
            f'{where}: expects {expected} input channels ({len(head["anchors"])} anchors x '
            f'(5 + {head["n_class"]} classes)), the layer before gives {channels[index - 1]}')
    return CfgLayer(kind, head=head), channels[index - 1]


BUILDERS = {
    'convolutional': build_convolutional,
    'route': build_route,
    'shortcut': build_shortcut,
    'maxpool': build_maxpool,
    'upsample': build_upsample,
    'dropout': build_dropout,
    'reorg': reorg.build_reorg,
    'yolo': lambda options, index, channels: build_head(options, index, channels, 'yolo'),
    'region': lambda options, index, channels: build_head(options, index, channels, 'region'),
}
