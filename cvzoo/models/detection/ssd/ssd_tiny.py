"""SSDTiny: a small SSD to train from scratch on a CPU (not a published architecture).

Made for cvzoo's training proof on generated shapes and for quick experiments on small
datasets: a 96x96 input (by default), a plain stack of 3x3 convolutions with batch
normalisation (no pretrained backbone), four feature maps (12, 6, 3 and 2 for 96x96),
and SSD's heads, box coder, loss and augmentation. Each map has anchors of aspect
ratio 1 (two sizes) and 2 (wide and tall): 4 per location.
"""

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.detection.ssd import multibox, ssd

# (name, out channels, stride) of the 3x3 convolutions; 'pool' is a 2x2 max pooling;
# 'map' marks where a feature map goes to the heads
_LAYERS = (('conv1_1', 16, 1), ('conv1_2', 16, 1), ('pool',),
           ('conv2_1', 32, 1), ('conv2_2', 32, 1), ('pool',),
           ('conv3_1', 64, 1), ('conv3_2', 64, 1), ('pool',), ('map',),
           ('conv4_1', 128, 2), ('map',),
           ('conv5_1', 128, 2), ('map',),
           ('conv6_1', 128, 2), ('map',))


class TinyExtractor(L.Chain):
    """Eight 3x3 conv-BN-ReLU layers and three poolings; four feature maps.

    Args:
        insize (int): side of the square input (a multiple of 8 is best).

    Attributes:
        insize (int), grids (tuple of int), out_channels (tuple of int).
    """

    def __init__(self, insize=96):
        super().__init__()
        self.insize = insize
        in_channels, out_channels = 3, []
        with self.init_scope():
            for layer in _LAYERS:
                if layer[0].startswith('conv'):
                    name, channels, stride = layer
                    setattr(self, name, L.Conv2DBNActiv(in_channels, channels, 3, stride, 1))
                    in_channels = channels
                elif layer[0] == 'map':
                    out_channels.append(in_channels)
        self.out_channels = tuple(out_channels)
        with config.using_config('train', False), config.no_backprop_mode():
            maps = self.forward(numpy.zeros((1, 3, insize, insize), numpy.float32))
        self.grids = tuple(int(h.shape[2]) for h in maps)

    def forward(self, x):
        """(B, 3, insize, insize) -> four feature maps."""
        ys, h = [], x
        for layer in _LAYERS:
            if layer[0] == 'pool':
                h = F.max_pooling_2d(h, 2, 2)
            elif layer[0] == 'map':
                ys.append(h)
            else:
                h = self[layer[0]](h)
        return ys


@zoo.register('ssd_tiny', task='detection')
class SSDTiny(ssd.SSD):
    """A small SSD (see the module docstring); no pretrained weights.

    Anchor sizes are fractions of the input side: 0.1, 0.25, 0.45, 0.7 and 0.95 (with
    the fifth for the second square of the last map).

    Args:
        n_fg_class (int or None): classes to detect (default 20).
        pretrained_model (str or None): a local cvzoo .npz saved from this model.
        insize (int): side of the square input.

    >>> model = SSDTiny(n_fg_class=3)
    >>> model.extractor.grids
    (12, 6, 3, 2)
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, insize=96):
        extractor = TinyExtractor(insize)
        n_fg_class = n_fg_class or 20
        aspect_ratios = ((2,),) * len(extractor.grids)
        heads = multibox.Multibox(n_fg_class + 1, aspect_ratios, extractor.out_channels)
        steps = tuple(insize / grid for grid in extractor.grids)
        sizes = tuple(insize * fraction for fraction in (0.1, 0.25, 0.45, 0.7, 0.95))
        super().__init__(extractor, heads, steps, sizes)
        if pretrained_model:
            self.load_pretrained(pretrained_model)


SSDTiny.weights = {}
