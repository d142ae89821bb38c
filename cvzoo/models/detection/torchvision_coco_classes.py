"""torchvision's 91-way COCO class layout and its reordering to cvzoo's.

torchvision's COCO detectors score 91 classes indexed by COCO category id: 0 is the
background and ten ids (``COCO_UNUSED_IDS``) are 'N/A', categories COCO never uses.
A softmax classifier's scores depend on those ten logits too, so a converted head keeps
them: :func:`reorder_coco_classes` puts its rows in cvzoo's order, the background, the
80 categories in cvzoo's label order, then the ten unused ids (``n_unused_class``
models score them but never return them).
"""

import numpy

from cvzoo.datasets.coco.coco_label_names import coco_label_to_category_id

TORCHVISION_COCO_CLASSES = 91
COCO_UNUSED_IDS = tuple(sorted(set(range(1, TORCHVISION_COCO_CLASSES))
                               - set(coco_label_to_category_id)))
# torchvision's class index of each class in cvzoo's COCO layout
COCO_CLASS_ORDER = (0,) + tuple(coco_label_to_category_id) + COCO_UNUSED_IDS


def reorder_coco_classes(array, n_group=1, n_per_class=1):
    """Reorder the rows of a layer with torchvision's 91 COCO classes to cvzoo's layout.

    Args:
        array (numpy.ndarray): (n_group * 91 * n_per_class, ...) rows: ``n_group``
            blocks (e.g. anchors) of 91 classes of ``n_per_class`` rows each (1 for
            scores, 4 for box offsets).
        n_group (int): blocks of 91 classes.
        n_per_class (int): consecutive rows per class.

    Returns:
        numpy.ndarray: the same shape, each block's classes in ``COCO_CLASS_ORDER``.

    >>> reorder_coco_classes(numpy.arange(91))[[0, 1, 12, 80, 81, 90]].tolist()
    [0, 1, 13, 90, 12, 83]
    """
    rows = array.reshape((n_group, TORCHVISION_COCO_CLASSES, n_per_class) + array.shape[1:])
    return numpy.ascontiguousarray(rows[:, list(COCO_CLASS_ORDER)]).reshape(array.shape)
