"""The former home of torchvision's box coding, now :mod:`cvzoo.models.detection.box_coding`.

Only ``ssd_vgg16_torchvision`` still imports it; this module goes once that imports
box_coding (``decode`` here keeps its old default clip, ``exp_clip=EXP_CLIP``).
"""

from cvzoo.models.detection import box_coding
from cvzoo.models.detection.box_coding import EXP_CLIP, encode

WEIGHTS = box_coding.UNIT_WEIGHTS
__all__ = ['EXP_CLIP', 'WEIGHTS', 'decode', 'encode']


def decode(anchor, loc, weights=WEIGHTS, exp_clip=EXP_CLIP):
    """:func:`cvzoo.models.detection.box_coding.decode`, clipping at ``EXP_CLIP`` by default."""
    return box_coding.decode(anchor, loc, weights, exp_clip)
