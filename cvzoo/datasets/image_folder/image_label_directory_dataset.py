"""ImageLabelDirectoryDataset: a folder of images and a folder of label PNGs."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.image_folder import directory_parsing_label_dataset
from cvzoo.utils import image


class ImageLabelDirectoryDataset(dataset_mixin.DatasetMixin):
    """Semantic segmentation from ``img_dir/<stem>.<ext>`` and ``label_dir/<stem>.png``.

    Args:
        img_dir, label_dir (str or Path): the two folders; images are paired by file stem.
        ignore_label (int or None): a label value read as -1 (e.g. 255); None: none.
        label_names (sequence of str or None): the class names (``self.label_names``);
            given, a label PNG holding a value that is neither a class id nor
            ``ignore_label`` is refused when read.

    Example i is ``img, label``: (3, H, W) float32 and (H, W) int32.

    Raises:
        FileNotFoundError: an image has no label PNG (named in the message).
        cvzoo.errors.AnnotationError: (when read, with ``label_names``) a label value out
            of range; the message names the file and the value.
    """

    def __init__(self, img_dir, label_dir, ignore_label=None, label_names=None):
        extensions = directory_parsing_label_dataset.IMAGE_EXTENSIONS
        self.img_paths = sorted(p for p in pathlib.Path(img_dir).iterdir()
                                if p.suffix.lower() in extensions)
        self.label_paths = [pathlib.Path(label_dir) / f'{p.stem}.png' for p in self.img_paths]
        missing = [str(p) for p in self.label_paths if not p.is_file()]
        if missing:
            raise errors.MissingFileError(f'label_dir: no label PNG {missing[0]} for its image '
                                          f'({len(missing)} missing in all)')
        self.ignore_label = ignore_label
        self.label_names = None if label_names is None else tuple(label_names)

    def __len__(self):
        return len(self.img_paths)

    def get_example(self, i):
        img = image.read_image(self.img_paths[i])
        label = image.read_label(self.label_paths[i])
        if self.ignore_label is not None:
            label[label == self.ignore_label] = -1
        if self.label_names is not None:
            self._check_values(label, self.label_paths[i])
        return img, label.astype(numpy.int32, copy=False)

    def _check_values(self, label, path):
        """Refuse a value that is neither a class id nor ignored (-1 by now)."""
        bad = label[(label < -1) | (label >= len(self.label_names)) | (
            (label == -1) & (self.ignore_label is None))]
        if len(bad):
            raise errors.AnnotationError(
                f'{path}: label value {int(bad[0])} is not a class id (0 to '
                f'{len(self.label_names) - 1}) nor the ignored value {self.ignore_label}')
