"""CfgNetwork: a network built from the sections of any Darknet ``.cfg``.

Supported sections: ``[convolutional]`` (batch_normalize, groups, pad/padding, stride,
activation linear/leaky/relu/logistic/swish/mish), ``[maxpool]`` (Darknet's padding
rule, any stride), ``[route]`` (layers, groups/group_id), ``[shortcut]`` (from,
activation), ``[upsample]``, ``[dropout]`` (identity at inference), ``[reorg]`` (pjreddie's
Darknet index rule, see :mod:`~cvzoo.models.detection.darknet.reorg`), ``[yolo]`` (anchors,
mask, classes, scale_x_y) and ``[region]`` (YOLOv2). Anything else raises an error
that names the section and its layer index.

The parameters of convolution ``i`` (its cfg layer index) are ``layer<i>/conv/W``,
``layer<i>/conv/b`` (without batch norm) and ``layer<i>/bn/{gamma,beta,avg_mean,avg_var}``.
:meth:`CfgNetwork.convert_darknet` slices a ``.weights`` file's values into those names,
in cfg order.
"""

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.models.detection.darknet import cfg_layers

# The most parameters a cfg may declare, counted before any is allocated: 2 ** 28 float32
# values (1 GiB). The largest Darknet networks (YOLOv4-P6, YOLOv7-E6E) have under 2 ** 28.
MAX_PARAMETERS = 2 ** 28
# The largest [net] width and height (Darknet's largest networks take 1536).
MAX_INSIZE = 8192


def _insize(net):
    """(height, width) of a [net] section, checked against MAX_INSIZE."""
    size = tuple(cfg_layers.positive_int(net, key, 416, '[net]') for key in ('height', 'width'))
    if max(size) > MAX_INSIZE:
        raise errors.CorruptFileError(f'[net]: height and width {size}, expected at most '
                                      f'{MAX_INSIZE}')
    return size


class CfgNetwork(L.Chain):
    """The layers of a Darknet cfg, run in order; returns the raw maps of its heads.

    Args:
        sections (list of (str, dict)): ``parse_darknet_cfg``'s output, ``[net]`` first.

    Attributes:
        insize (tuple of int): (H, W) of the network input, from ``[net]``.
        heads (list of dict): per ``[yolo]``/``[region]`` section in cfg order: ``kind``,
            ``n_class``, ``anchors`` ((A, 2) float32 (w, h); network-input pixels for
            yolo, grid cells for region), ``scale_x_y`` and ``index`` (its layer index).

    Raises:
        cvzoo.errors.CorruptFileError: an unknown section, a bad reference or
            inconsistent channels; the message names the section and layer index.
    """

    def __init__(self, sections):
        super().__init__()
        self.insize = _insize(sections[0][1])
        channels = {-1: cfg_layers.positive_int(sections[0][1], 'channels', 3, '[net]')}
        self.layers = []
        self.heads = []
        n_parameter = 0
        for index, (kind, options) in enumerate(sections[1:]):
            where = f'[{kind}] (layer {index})'
            if kind not in cfg_layers.BUILDERS:
                raise errors.CorruptFileError(
                    f'{where}: section kind not supported; expected one of '
                    f'{sorted(cfg_layers.BUILDERS)}')
            cfg_layers.refuse_unsupported(kind, options, where)
            if kind == 'convolutional':
                n_parameter += cfg_layers.convolution_parameters(options, channels[index - 1],
                                                                 where)
                if n_parameter > MAX_PARAMETERS:
                    raise errors.CorruptFileError(
                        f'{where}: the cfg declares {n_parameter} parameters up to here, more '
                        f'than the {MAX_PARAMETERS} any Darknet network has')
            layer, channels[index] = cfg_layers.BUILDERS[kind](options, index, channels)
            if isinstance(layer, L.Link):
                with self.init_scope():
                    setattr(self, f'layer{index}', layer)
            if kind in ('yolo', 'region'):
                self.heads.append(dict(layer.head, index=index))
            self.layers.append(layer)
        if not self.heads:
            raise errors.CorruptFileError('the cfg has no [yolo] or [region] section')
        self._keep = self._kept_outputs()

    def _kept_outputs(self):
        """Indices of the layer outputs read later (by route/shortcut) or returned."""
        keep = {head['index'] for head in self.heads}
        for layer in self.layers:
            keep.update(getattr(layer, 'sources', ()))
        return keep

    def forward(self, x):
        """Run the layers; return the list of raw head maps (B, A * (5 + C), h, w)."""
        outputs = {}
        for index, layer in enumerate(self.layers):
            x = layer(x, outputs)
            if index in self._keep:
                outputs[index] = x
        return [outputs[head['index']] for head in self.heads]

    def convolutions(self):
        """(layer index, DarknetConvolution) pairs in cfg order."""
        return [(i, layer) for i, layer in enumerate(self.layers)
                if isinstance(layer, cfg_layers.DarknetConvolution)]

    def darknet_blocks(self):
        """(parameter name, shape) of every block of a ``.weights`` file, in file order."""
        return [(f'layer{i}/{name}', shape) for i, layer in self.convolutions()
                for name, shape in layer.darknet_blocks()]

    def convert_darknet(self, values, prefix=''):
        """Slice a ``.weights`` file's float32 values into this network's parameters.

        Args:
            values (numpy.ndarray): (n,) float32, everything after the header.
            prefix (str): put before every name (e.g. ``'network/'``).

        Returns:
            dict: name -> float32 array, every convolution's parameters.

        Raises:
            cvzoo.errors.CorruptFileError: the file holds fewer or more values than
                the cfg's convolutions need (both counts in the message).
        """
        blocks = self.darknet_blocks()
        n_needed = sum(int(numpy.prod(shape)) for _, shape in blocks)
        if values.size != n_needed:
            raise errors.CorruptFileError(
                f'the cfg needs {n_needed} weight values but the file holds {values.size}; '
                'the cfg does not match these weights')
        arrays, position = {}, 0
        for name, shape in blocks:
            n = int(numpy.prod(shape))
            arrays[prefix + name] = values[position:position + n].reshape(shape)
            position += n
        for i, layer in self.convolutions():
            if layer.batch_normalize:  # the batch count of fine-tuning, not in the file
                arrays[f'{prefix}layer{i}/bn/N'] = numpy.array(0, numpy.int64)
        return arrays

    def reset_heads(self, n_fg_class):
        """Re-make the convolution feeding each head for ``n_fg_class`` classes.

        Raises:
            ValueError: a head is not directly preceded by a convolution.
        """
        for head in self.heads:
            index = head['index'] - 1
            old = self.layers[index]
            if not isinstance(old, cfg_layers.DarknetConvolution):
                raise ValueError(  # noqa: TRY004 - a cfg the argument cannot apply to
                    f'n_fg_class: the head at layer {head["index"]} is not fed by '
                    'a convolution, so it cannot be re-made')
            conv = old.conv
            new = cfg_layers.DarknetConvolution(
                conv.W.shape[1] * conv.groups, len(head['anchors']) * (5 + n_fg_class),
                conv.ksize, conv.stride, conv.pad, groups=1,
                batch_normalize=old.batch_normalize, activation=old.activation)
            new.to_device(self.device)
            delattr(self, f'layer{index}')
            with self.init_scope():
                setattr(self, f'layer{index}', new)
            self.layers[index] = new
            head['n_class'] = n_fg_class
