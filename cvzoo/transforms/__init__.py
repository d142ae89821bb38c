"""Image, box, mask and keypoint transforms (ChainerCV's names, DESIGN.md's box order).

Images are (C, H, W) arrays; boxes are (R, 4) (x_min, y_min, x_max, y_max); points are
(..., 2) (x, y); sizes are (H, W). Random transforms draw from numpy.random and return
with ``return_param=True`` what the matching box/mask/point transform needs.
"""

# --- image ---
from cvzoo.transforms.image.center_crop import center_crop
from cvzoo.transforms.image.flip import flip
from cvzoo.transforms.image.pca_lighting import pca_lighting
from cvzoo.transforms.image.random_crop import random_crop
from cvzoo.transforms.image.random_distort import random_distort
from cvzoo.transforms.image.random_expand import random_expand
from cvzoo.transforms.image.random_flip import random_flip
from cvzoo.transforms.image.random_rotate import random_rotate
from cvzoo.transforms.image.random_scale import random_scale
from cvzoo.transforms.image.random_sized_crop import random_sized_crop
from cvzoo.transforms.image.resize import resize
from cvzoo.transforms.image.resize_contain import resize_contain
from cvzoo.transforms.image.scale import scale
from cvzoo.transforms.image.ten_crop import ten_crop

# --- bbox ---
from cvzoo.transforms.bbox.crop_bbox import crop_bbox
from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.random_crop_with_bbox_constraints import (
    random_crop_with_bbox_constraints)
from cvzoo.transforms.bbox.resize_bbox import resize_bbox
from cvzoo.transforms.bbox.rotate_bbox import rotate_bbox
from cvzoo.transforms.bbox.translate_bbox import translate_bbox

# --- mask ---
from cvzoo.transforms.mask.flip_mask import flip_mask
from cvzoo.transforms.mask.resize_mask import resize_mask

# --- point ---
from cvzoo.transforms.point.flip_point import flip_point
from cvzoo.transforms.point.resize_point import resize_point
from cvzoo.transforms.point.translate_point import translate_point
