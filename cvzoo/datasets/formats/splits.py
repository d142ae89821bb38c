"""Splits: what a format's reader finds in a folder (one home for every format module)."""

import dataclasses


@dataclasses.dataclass
class Splits:
    """A dataset read from disk, before a validation split is chosen.

    Attributes:
        train: the training examples (the whole dataset when it has no split of its own).
        val: the format's own validation split (VOC's val.txt or test.txt, YOLO's
            ``val:``, COCO's ``*_val*.json``, a ``val/`` folder), or None.
        label_names (tuple of str): class names, label i is name i.
        point_names (tuple of str or None): the keypoints' names (keypoint data only).
    """

    train: object
    val: object
    label_names: tuple
    point_names: tuple | None = None


VAL_NAMES = ('val', 'valid', 'validation', 'test')  # a split folder or list read as validation
