"""ResNet101Extractor: FCIS's backbone, ResNet-101 up to res5 at stride 16."""

import functools

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.core.config import using_config
from cvzoo.models.common import resnet_blocks


class ResNet101Extractor(L.Chain):
    """ResNet-101 (Caffe arrangement: the stride in the first 1x1 convolution of a
    projecting block) whose res5 keeps stride 16 with dilation 2, as ChainerCV's FCIS.

    ``conv1`` keeps Chainer's default BN eps (2e-5), the blocks use 1e-5; ``pool1`` is a
    3x3 max pooling of stride 2 without padding whose last window may hang over the edge
    (Chainer's ``cover_all``). Batch normalisation always runs with its stored statistics,
    as in ChainerCV (which also stops gradients below res3 during training).

    Parameter names are ChainerCV's (``conv1/conv/W``, ``res4/b22/conv2/bn/avg_var``).

    Args:
        initialW: initializer of the convolutions (default He normal).

    Output of ``forward``: ``(res4, res5)``, (B, 1024, H / 16, W / 16) and
    (B, 2048, H / 16, W / 16) (sides rounded up through each stride).
    """

    def __init__(self, initialW=None):
        super().__init__()
        initialW = initialW or initializers.HeNormal()
        kwargs = {'initialW': initialW, 'bn_kwargs': {'eps': 1e-5}, 'stride_first': True}
        with self.init_scope():
            self.conv1 = L.Conv2DBNActiv(3, 64, 7, 2, 3, nobias=True, initialW=initialW)
            self.res2 = resnet_blocks.ResBlock(3, 64, 64, 256, 1, **kwargs)
            self.res3 = resnet_blocks.ResBlock(4, 256, 128, 512, 2, **kwargs)
            self.res4 = resnet_blocks.ResBlock(23, 512, 256, 1024, 2, **kwargs)
            self.res5 = resnet_blocks.ResBlock(3, 1024, 512, 2048, 1, dilate=2, **kwargs)
        self.pool1 = functools.partial(F.max_pooling_2d, ksize=3, stride=2)

    def forward(self, x):
        """(B, 3, H, W) -> (res4, res5) Variables."""
        with using_config('train', False):
            h = self.res2(self.pool1(self.conv1(x)))
            h.unchain_backward()  # NOTE: conv1 and res2 stay fixed in training
            res4 = self.res4(self.res3(h))
            res5 = self.res5(res4)
        return res4, res5
