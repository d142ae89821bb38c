"""VGG16 feature extractors of SSD300 and SSD512, with ChainerCV's layer names.

Liu et al., "SSD: Single Shot MultiBox Detector", ECCV 2016, section 3 and fig. 2.
The VGG16 of Simonyan and Zisserman (ICLR 2015) changed for SSD:

- conv4_3's output goes to the heads L2-normalised with a learned scale (``norm4``,
  initialised to 20);
- pool5 is a 3x3 max pooling of stride 1 and pad 1;
- fc6 and fc7 become ``conv6`` (3x3, dilation 6, pad 6, 1024 channels) and ``conv7``
  (1x1, 1024 channels);
- extra layers ``conv8_1 ... conv11_2`` (``conv12_2`` for SSD512) give the smaller maps.

Every convolution is followed by ReLU; max pooling keeps Chainer's ``cover_all=True``,
which makes the 75x75 map of a 300x300 input 38x38.
"""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models.detection.ssd import normalize

# (name, out channels, ksize, stride, pad); 'pool' entries are max poolings
_VGG_LAYERS = (
    ('conv1_1', 64, 3, 1, 1), ('conv1_2', 64, 3, 1, 1), ('pool', 2, 2, 0),
    ('conv2_1', 128, 3, 1, 1), ('conv2_2', 128, 3, 1, 1), ('pool', 2, 2, 0),
    ('conv3_1', 256, 3, 1, 1), ('conv3_2', 256, 3, 1, 1), ('conv3_3', 256, 3, 1, 1),
    ('pool', 2, 2, 0),
    ('conv4_1', 512, 3, 1, 1), ('conv4_2', 512, 3, 1, 1), ('conv4_3', 512, 3, 1, 1),
    ('norm4',), ('pool', 2, 2, 0),
    ('conv5_1', 512, 3, 1, 1), ('conv5_2', 512, 3, 1, 1), ('conv5_3', 512, 3, 1, 1),
    ('pool', 3, 1, 1),
)
VGG_NAMES = tuple(layer[0] for layer in _VGG_LAYERS if layer[0].startswith('conv')) + (
    'conv6', 'conv7', 'norm4')
# (name, out channels, ksize, stride, pad) of the extra layers, in pairs
_EXTRAS_300 = (
    ('conv8_1', 256, 1, 1, 0), ('conv8_2', 512, 3, 2, 1),
    ('conv9_1', 128, 1, 1, 0), ('conv9_2', 256, 3, 2, 1),
    ('conv10_1', 128, 1, 1, 0), ('conv10_2', 256, 3, 1, 0),
    ('conv11_1', 128, 1, 1, 0), ('conv11_2', 256, 3, 1, 0),
)
_EXTRAS_512 = (
    ('conv8_1', 256, 1, 1, 0), ('conv8_2', 512, 3, 2, 1),
    ('conv9_1', 128, 1, 1, 0), ('conv9_2', 256, 3, 2, 1),
    ('conv10_1', 128, 1, 1, 0), ('conv10_2', 256, 3, 2, 1),
    ('conv11_1', 128, 1, 1, 0), ('conv11_2', 256, 3, 2, 1),
    ('conv12_1', 128, 1, 1, 0), ('conv12_2', 256, 4, 1, 1),
)


class VGG16Extractor(L.Chain):
    """SSD's VGG16 and a stack of extra layers; returns one feature map per head.

    The maps are: ``norm4(conv4_3)``, ``conv7`` and the output of every second extra
    layer (``conv8_2``, ``conv9_2``, ...).

    Args:
        extras (sequence): ``(name, out channels, ksize, stride, pad)`` of the extra
            convolutions, in pairs (1x1 then 3x3).
        insize (int): side of the square input.
        grids (tuple of int): side of each output map for that input.

    Attributes:
        insize (int), grids (tuple of int): as given.
        out_channels (tuple of int): channels of each output map.
    """

    def __init__(self, extras, insize, grids):
        super().__init__()
        self.insize, self.grids = insize, tuple(grids)
        self._extras = tuple(extras)
        extra_init = {'initialW': initializers.GlorotUniform(),
                      'initial_bias': initializers.Zero()}
        in_channels = 3
        with self.init_scope():
            for layer in _VGG_LAYERS:
                if layer[0].startswith('conv'):
                    name, channels, ksize, stride, pad = layer
                    setattr(self, name, L.Convolution2D(in_channels, channels, ksize, stride,
                                                        pad))
                    in_channels = channels
            self.norm4 = normalize.Normalize(512, initial=20.0)
            self.conv6 = L.Convolution2D(512, 1024, 3, 1, 6, dilate=6)
            self.conv7 = L.Convolution2D(1024, 1024, 1)
            in_channels = 1024
            for name, channels, ksize, stride, pad in self._extras:
                setattr(self, name, L.Convolution2D(in_channels, channels, ksize, stride,
                                                    pad, **extra_init))
                in_channels = channels
        self.out_channels = (512, 1024) + tuple(layer[1] for layer in self._extras[1::2])

    def forward(self, x):
        """(B, 3, insize, insize) -> list of (B, C_k, grid_k, grid_k) feature maps."""
        ys = []
        h = x
        for layer in _VGG_LAYERS:
            if layer[0] == 'pool':
                h = F.max_pooling_2d(h, layer[1], layer[2], layer[3])
            elif layer[0] == 'norm4':
                ys.append(self.norm4(h))
            else:
                h = F.relu(self[layer[0]](h))
        h = F.relu(self.conv7(F.relu(self.conv6(h))))
        ys.append(h)
        for first, second in zip(self._extras[::2], self._extras[1::2]):
            h = F.relu(self[second[0]](F.relu(self[first[0]](h))))
            ys.append(h)
        return ys


VGG16Extractor300 = functools.partial(VGG16Extractor, _EXTRAS_300, 300, (38, 19, 10, 5, 3, 1))
VGG16Extractor300.__doc__ = 'The extractor of SSD300: maps of 38, 19, 10, 5, 3 and 1.'
VGG16Extractor512 = functools.partial(VGG16Extractor, _EXTRAS_512, 512,
                                      (64, 32, 16, 8, 4, 2, 1))
VGG16Extractor512.__doc__ = 'The extractor of SSD512: maps of 64, 32, 16, 8, 4, 2 and 1.'
