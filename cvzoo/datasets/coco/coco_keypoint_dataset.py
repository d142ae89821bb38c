"""COCO person keypoints from a person_keypoints json (official files or any COCO-format
json whose annotations hold ``keypoints``)."""

import numpy

from cvzoo import errors
from cvzoo.datasets.coco import coco_annotations, coco_bbox_dataset, coco_keypoint_names


def _points(annotations, positions, n_point):
    """(R, K, 2) float32 (x, y) and (R, K) bool labelled flags of the annotations at
    ``positions`` (of a :class:`COCOAnnotations`)."""
    rows = []
    for position in positions:
        values = annotations.entries[position].get('keypoints')
        if not (type(values) is list and len(values) == 3 * n_point
                and all(map(coco_annotations.is_number, values))):
            raise errors.AnnotationError(
                f"{annotations.where(position)}: 'keypoints' must be {3 * n_point} finite "
                f'numbers (x, y, v for each of {n_point} points), got '
                f'{coco_annotations.describe(values)}')
        rows.append(values)
    triples = numpy.array(rows, numpy.float32).reshape(len(positions), n_point, 3)
    flags = triples[:, :, 2]
    bad = numpy.flatnonzero(((flags != 0) & (flags != 1) & (flags != 2)).any(axis=1))
    if len(bad):
        position = positions[bad[0]]
        raise errors.AnnotationError(
            f"{annotations.where(position)}: 'keypoints' must have a v of 0 (not labelled), "
            f'1 (hidden) or 2 (seen) for each point, got '
            f"{flags[bad[0]].tolist()}")
    # NOTE: v = 1 (labelled, hidden) and v = 2 (labelled, seen) both give a location;
    # pycocotools' OKS uses every point with v > 0, so both count as visible here.
    return triples[:, :, :2].copy(), flags > 0


def _point_names(annotations):
    """The 'keypoints' names of the json's first category that has them, or COCO's."""
    for category in annotations.categories:
        if 'keypoints' in category:
            names = category['keypoints']
            if not (type(names) is list and names and all(
                    type(name) is str and name for name in names)):
                raise errors.AnnotationError(
                    f"{annotations.json_path}: category {category['id']}: 'keypoints' must be "
                    f'a list of point names, got {coco_annotations.describe(names)}')
            return tuple(names)
    return coco_keypoint_names.coco_keypoint_names


class COCOKeypointDataset(coco_bbox_dataset.COCOBboxDataset):
    """COCO 2014/2017 person keypoints, or any COCO-format json with keypoints.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/coco``, downloaded when absent) or a
            folder with ``annotations/person_keypoints_<split><year>.json`` and
            ``<split><year>/``.
        split (str): 'train' or 'val'.
        year (str): '2014' or '2017'.
        use_crowded (bool): keep crowd regions (iscrowd=1; they have no keypoints).
        return_crowded (bool): also return the crowd flags.
        return_area (bool): also return the annotations' areas.

    Use :meth:`from_json` (inherited) for a json of your own. Example i is
    ``img, point, visible, label, bbox`` (then ``crowded``, ``area`` when asked, in the
    order of :class:`COCOBboxDataset`):

        img      (3, H, W) float32  RGB in [0, 255]
        point    (R, K, 2) float32  (x, y) in pixels (ChainerCV's were (y, x)); K = 17
                                    for COCO, in the order of ``self.point_names``
        visible  (R, K) bool        the point is labelled (v > 0 in the json: seen or
                                    hidden but placed), as pycocotools' OKS counts it
        label    (R,) int32         index into ``self.label_names`` (('person',))
        bbox     (R, 4) float32     (x_min, y_min, x_max, y_max), clipped to the image
        crowded  (R,) bool
        area     (R,) float32       the json's segmentation area (OKS scale)

    Images are ordered by id; those without annotations are kept (R = 0). Labels are
    the json's categories sorted by id, so the person is label 0.

    Raises:
        cvzoo.errors.AnnotationError: as :class:`COCOBboxDataset`, and (when read) an
            annotation's 'keypoints' that are not 3 K finite numbers with each v in
            0, 1, 2, or a category's 'keypoints' that are not a list of names.
    """

    def __init__(self, data_dir='auto', split='train', year='2017', use_crowded=False,
                 return_crowded=False, return_area=False, *, _json_path=None, _image_dir=None):
        if _json_path is None:
            _json_path, _image_dir = coco_annotations.resolve_coco_paths(
                data_dir, split, year, annotation='person_keypoints')
        # NOTE: data_dir=None keeps the json's own categories: a person_keypoints json
        # has one, the person, which becomes label 0 (the standard 80 names do not apply).
        super().__init__(None, split, year, use_crowded, return_crowded, return_area,
                         _json_path=_json_path, _image_dir=_image_dir)
        self.point_names = _point_names(self._annotations)

    def get_example(self, i):
        img, bbox, label, crowd, area, positions = self._boxes(i)
        point, visible = _points(self._annotations, positions, len(self.point_names))
        example = (img, point, visible, label, bbox)
        if self.return_crowded:
            example += (crowd,)
        if self.return_area:
            example += (area,)
        return example
