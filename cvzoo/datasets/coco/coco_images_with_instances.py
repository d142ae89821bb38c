"""The images of a COCO-format dataset that hold an instance to train on."""

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
    annotations = dataset._annotations  # NOTE: the records of this package's own reader
    keep, others = [], []
    for index, record in enumerate(annotations.images):
        anns = annotations.annotations.get(record['id'], [])
        (keep if any(not ann.get('iscrowd', 0) for ann in anns) else others).append(index)
    if not others:
        return dataset
    return SubDataset(dataset, 0, len(keep), order=keep + others)
