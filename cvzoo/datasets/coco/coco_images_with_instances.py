"""The images of a COCO-format dataset that hold an instance to train on."""

import numpy

from cvzoo.datasets.coco.coco_bbox_dataset import COCOBboxDataset
from cvzoo.datasets.sub_dataset import SubDataset


def images_with_instances(dataset):
    """``dataset`` without its images that have no annotation but crowd regions.

    Exports of annotation tools (Roboflow's, CVAT's) keep the images nobody annotated;
    a detector's train chain needs at least one box per image. Only the json is read.

    Args:
        dataset (COCOBboxDataset): a COCO-format dataset (e.g. a
            ``COCOInstanceSegmentationDataset``); another dataset is returned as it is.

    Returns:
        the examples of the images holding a non-crowd annotation, in their order.
    """
    if not isinstance(dataset, COCOBboxDataset):
        return dataset
    counts = dataset._annotations.instance_counts()  # NOTE: this package's own reader
    keep, others = numpy.flatnonzero(counts).tolist(), numpy.flatnonzero(counts == 0).tolist()
    if not others:
        return dataset
    return SubDataset(dataset, 0, len(keep), order=keep + others)
