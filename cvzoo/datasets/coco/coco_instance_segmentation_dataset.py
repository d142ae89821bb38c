"""COCO instance segmentation: masks decoded from polygons and RLE without pycocotools."""

import numpy

from cvzoo import errors
from cvzoo.datasets.coco import coco_bbox_dataset, coco_mask_decoding

# NOTE: the most mask pixels (bytes) one example may hold. COCO's busiest image holds
# about 90 masks of 640x480 (28 MB); 2 ** 32 leaves room for high-resolution images
# with hundreds of masks while refusing a json that stacks thousands of annotations on
# one image to exhaust memory.
MAX_MASK_PIXELS = 2 ** 32


class COCOInstanceSegmentationDataset(coco_bbox_dataset.COCOBboxDataset):
    """COCO instance segmentation; arguments as :class:`COCOBboxDataset` (and from_json).

    Example i is ``img, mask, label`` (then ``crowded``, ``area`` when asked):

        img      (3, H, W) float32  RGB in [0, 255]
        mask     (R, H, W) bool     from polygons, compressed RLE strings or uncompressed
                                    RLE counts (crowd regions)
        label    (R,) int32
        crowded  (R,) bool
        area     (R,) float32

    Raises:
        cvzoo.errors.AnnotationError: (when read) a segmentation is missing or malformed
            (see :mod:`cvzoo.datasets.coco.coco_mask_decoding`; an RLE must have the
            image's size), or the image's masks would exceed MAX_MASK_PIXELS; the message
            names the json and the entry.
    """

    def get_example(self, i):
        img, _, label, crowd, area, positions = self._boxes(i)
        size = img.shape[1:]
        if len(positions) * size[0] * size[1] > MAX_MASK_PIXELS:
            raise errors.AnnotationError(
                f'{self._annotations.image_where(i)}: {len(positions)} masks of '
                f'{size[1]}x{size[0]} pixels are more than the {MAX_MASK_PIXELS} mask '
                f'pixels one example may hold')
        mask = numpy.zeros((len(positions),) + size, bool)
        for k, position in enumerate(positions):
            entry = self._annotations.entries[position]
            where = self._annotations.where(position)
            if 'segmentation' not in entry:
                raise errors.AnnotationError(f"{where}: 'segmentation' is missing")
            try:
                mask[k] = coco_mask_decoding.segmentation_to_mask(entry['segmentation'], size)
            except ValueError as error:
                raise errors.AnnotationError(f"{where}: 'segmentation': {error}") from None
        example = (img, mask, label)
        if self.return_crowded:
            example += (crowd,)
        if self.return_area:
            example += (area,)
        return example
