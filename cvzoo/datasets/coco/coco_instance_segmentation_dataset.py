"""COCO instance segmentation: masks decoded from polygons and RLE without pycocotools."""

import numpy

from cvzoo import errors
from cvzoo.datasets.coco import coco_bbox_dataset, coco_mask_decoding
from cvzoo.utils import image


class COCOInstanceSegmentationDataset(coco_bbox_dataset.COCOBboxDataset):
    """COCO instance segmentation; arguments as :class:`COCOBboxDataset` (and from_json).

    Example i is ``img, mask, label`` (then ``crowded``, ``area`` when asked):

        img      (3, H, W) float32  RGB in [0, 255]
        mask     (R, H, W) bool     from polygons, compressed RLE strings or uncompressed
                                    RLE counts (crowd regions)
        label    (R,) int32
        crowded  (R,) bool
        area     (R,) float32
    """

    def get_example(self, i):
        _, label, crowd, area, anns = self._annotations.boxes(i, self.use_crowded)
        img = image.read_image(self._annotations.image_path(i, self.image_dir))
        size = img.shape[1:]
        mask = numpy.zeros((len(anns),) + size, bool)
        for k, ann in enumerate(anns):
            where = f'{self._annotations.json_path}: annotation {ann.get("id")} field ' \
                    f"'segmentation'"
            if 'segmentation' not in ann:
                raise errors.CorruptFileError(f'{where}: missing')
            try:
                mask[k] = coco_mask_decoding.segmentation_to_mask(ann['segmentation'], size)
            except (ValueError, TypeError, KeyError) as error:
                raise errors.CorruptFileError(f'{where}: {error}') from None
        example = (img, mask, label)
        if self.return_crowded:
            example += (crowd,)
        if self.return_area:
            example += (area,)
        return example
