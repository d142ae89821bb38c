"""What cvzoo's tiny R-CNNs (``mask_rcnn_tiny``, ``keypoint_rcnn_tiny``) share: their FPN, a
few strided 3x3 convolutions with batch normalisation under the FPN neck
(:class:`~cvzoo.models.detection.fpn.FPN`), and the training numbers that make them learn
from scratch on a CPU (:func:`from_scratch_on_a_cpu`).

Not a published backbone: five 3x3 conv-BN-ReLU layers of stride 2 (32, 32, 64, 128 and
128 channels) whose last four outputs are the maps at 1/4, 1/8, 1/16 and 1/32 of the
input that the FPN takes (the ResNet's res2 ... res5 in the published R-CNNs). The BN
layers train with the rest (there are no pretrained statistics to keep).
"""

import dataclasses

import cvzoo.core.links as L
from cvzoo.models.detection import fpn

# channels of the base's four maps (1/4 ... 1/32) and of its first layer (1/2)
BASE_CHANNELS = (32, 64, 128, 128)
STEM_CHANNELS = 32
# channels of the FPN's levels and of the heads' convolutions (the papers' 256)
CHANNELS = 64
# RoIs drawn per image for the second-stage heads (the papers' 512)
ROI_N_SAMPLE = 64
# cvzoo's own training numbers, measured (from random weights on generated shapes, a CPU)
LR = 2e-3
BATCHSIZE = 4
ITERATIONS = 1000
WARMUP = 100


class TinyBase(L.Chain):
    """(B, 3, H, W), H and W multiples of 32 -> four maps at 1/4, 1/8, 1/16 and 1/32 of
    the input, with :data:`BASE_CHANNELS` channels (``conv1`` ... ``conv5``, each a 3x3
    convolution of stride 2 without bias, BN and ReLU).

    >>> import numpy
    >>> maps = TinyBase()(numpy.zeros((1, 3, 64, 96), numpy.float32))
    >>> [h.shape[1:] for h in maps]
    [(32, 16, 24), (64, 8, 12), (128, 4, 6), (128, 2, 3)]
    """

    def __init__(self):
        super().__init__()
        channels = (3, STEM_CHANNELS, *BASE_CHANNELS)
        with self.init_scope():
            for i in range(1, len(channels)):
                setattr(self, f'conv{i}', L.Conv2DBNActiv(channels[i - 1], channels[i], 3, 2,
                                                          1, nobias=True))

    def forward(self, x):
        """The four maps (see the class docstring)."""
        h = self.conv2(self.conv1(x))
        maps = [h]
        for i in range(3, len(BASE_CHANNELS) + 2):
            h = self[f'conv{i}'](h)
            maps.append(h)
        return maps


def tiny_fpn(channels=CHANNELS):
    """The FPN (biased lateral and output convolutions of ``channels``) on a
    :class:`TinyBase`: (B, 3, H, W) -> five levels at
    :data:`~cvzoo.models.detection.fpn.FPN_SCALES`."""
    return fpn.FPN(TinyBase(), BASE_CHANNELS, fpn.FPN_SCALES, channels=channels)


def from_scratch_on_a_cpu(recipe):
    """A family's R-CNN recipe with the tiny R-CNNs' numbers: Adam at :data:`LR` for
    :data:`BATCHSIZE` images, no weight decay, :data:`ITERATIONS` iterations at a constant
    rate after a linear warm-up over :data:`WARMUP` from a tenth of it."""
    return dataclasses.replace(
        recipe, optimizer='adam', lr=LR, batchsize=BATCHSIZE, weight_decay=0.0,
        iterations=ITERATIONS, schedule='constant', warmup_iterations=WARMUP,
        warmup_start_ratio=0.1)
