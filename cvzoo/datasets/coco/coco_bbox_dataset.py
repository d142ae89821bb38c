"""COCO detection from an instances json (official files or any COCO-format json)."""

import numpy

from cvzoo.datasets import dataset_mixin
from cvzoo.datasets.check_image_size import check_image_size
from cvzoo.datasets.coco import coco_annotations
from cvzoo.utils import image


class COCOBboxDataset(dataset_mixin.DatasetMixin):
    """COCO 2014/2017 detection, or any COCO-format json with :meth:`from_json`.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/coco``, downloaded from
            images.cocodataset.org when absent) or a folder with
            ``annotations/instances_<split><year>.json`` and ``<split><year>/``.
        split (str): 'train' or 'val'.
        year (str): '2014' or '2017'.
        use_crowded (bool): keep crowd regions (iscrowd=1).
        return_crowded (bool): also return the crowd flags.
        return_area (bool): also return the annotations' areas.

    Example i is ``img, bbox, label`` (then ``crowded``, ``area`` when asked):

        img      (3, H, W) float32  RGB in [0, 255]
        bbox     (R, 4) float32     (x_min, y_min, x_max, y_max), clipped to the image
        label    (R,) int32         index into ``self.label_names`` (for the official
                                    files coco_bbox_label_names)
        crowded  (R,) bool
        area     (R,) float32       the json's segmentation area

    Images are ordered by id; those without annotations are kept (R = 0).

    Raises:
        cvzoo.errors.AnnotationError: (when made) a field of the json has the wrong type
            or value; (when read) an image's width and height in the json are not those
            of its file. The message names the json and the entry.
    """

    def __init__(self, data_dir='auto', split='train', year='2017', use_crowded=False,
                 return_crowded=False, return_area=False, *, _json_path=None, _image_dir=None):
        if _json_path is None:
            _json_path, _image_dir = coco_annotations.resolve_coco_paths(data_dir, split, year)
        self._annotations = coco_annotations.COCOAnnotations(
            _json_path, standard_labels=data_dir == 'auto')
        self.image_dir = _image_dir
        self.label_names = self._annotations.label_names
        self.category_ids = self._annotations.category_ids
        self.ids = [record['id'] for record in self._annotations.images]
        self.use_crowded = use_crowded
        self.return_crowded = return_crowded
        self.return_area = return_area

    @classmethod
    def from_json(cls, json_path, image_dir, **kwargs):
        """Load any COCO-format json; labels are its categories sorted by id.

        Example, on your own files::

            dataset = COCOBboxDataset.from_json('my/instances.json', 'my/images')
        """
        return cls(data_dir=None, _json_path=json_path, _image_dir=image_dir, **kwargs)

    def __len__(self):
        return len(self.ids)

    def _read_image(self, i):
        """Image i, checked against the width and height the json gives it."""
        path = self._annotations.image_path(i, self.image_dir)
        img = image.read_image(path)
        check_image_size(self._annotations.image_where(i), self._annotations.image_size(i),
                         img, path)
        return img

    def _boxes(self, i):
        """Image i's boxes (clipped to it), label, crowd, area and annotation positions."""
        img = self._read_image(i)
        bbox, label, crowd, area, positions = self._annotations.boxes(i, self.use_crowded)
        # NOTE: clipped to the image read as well: a custom json may lack width/height.
        bbox[:, 0::2] = numpy.clip(bbox[:, 0::2], 0, img.shape[2])
        bbox[:, 1::2] = numpy.clip(bbox[:, 1::2], 0, img.shape[1])
        return img, bbox, label, crowd, area, positions

    def get_example(self, i):
        img, bbox, label, crowd, area, _ = self._boxes(i)
        example = (img, bbox, label)
        if self.return_crowded:
            example += (crowd,)
        if self.return_area:
            example += (area,)
        return example

