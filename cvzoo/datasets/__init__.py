"""Dataset loaders (lazy: images are read when an example is asked for) and combinators.

Every loader, combinator and label-name list below can be taken from the package
(``from cvzoo.datasets import VOCBboxDataset``). The package imports a module only when
one of its names is first asked for, so that a model module that imports label names
(``cvzoo.datasets.voc.voc_label_names``) loads no dataset loader and no Pillow.
:mod:`cvzoo.datasets.registry` resolves the ``--dataset`` names of the scripts.
"""

import importlib

# Public name -> the module of this package that defines it.
_NAMES = {
    'ade20k_semantic_segmentation_label_names': 'ade20k.ade20k_label_names',
    'ADE20KSemanticSegmentationDataset': 'ade20k.ade20k_semantic_segmentation_dataset',
    'CamVidDataset': 'camvid.camvid_dataset',
    'camvid_label_colors': 'camvid.camvid_label_names',
    'camvid_label_names': 'camvid.camvid_label_names',
    'cityscapes_semantic_segmentation_label_colors': 'cityscapes.cityscapes_label_names',
    'cityscapes_semantic_segmentation_label_names': 'cityscapes.cityscapes_label_names',
    'CityscapesSemanticSegmentationDataset': 'cityscapes.cityscapes_semantic_segmentation_dataset',
    'COCOBboxDataset': 'coco.coco_bbox_dataset',
    'COCOInstanceSegmentationDataset': 'coco.coco_instance_segmentation_dataset',
    'COCOKeypointDataset': 'coco.coco_keypoint_dataset',
    'coco_bbox_label_names': 'coco.coco_label_names',
    'coco_category_id_to_label': 'coco.coco_label_names',
    'coco_instance_segmentation_label_names': 'coco.coco_label_names',
    'coco_keypoint_names': 'coco.coco_keypoint_names',
    'coco_point_skeleton': 'coco.coco_keypoint_names',
    'ConcatenatedDataset': 'concatenated_dataset',
    'DatasetMixin': 'dataset_mixin',
    'DirectoryParsingLabelDataset': 'image_folder.directory_parsing_label_dataset',
    'ImageLabelDirectoryDataset': 'image_folder.image_label_directory_dataset',
    'LabeledImageDataset': 'image_folder.labeled_image_dataset',
    'imagenet_label_names': 'imagenet.imagenet_label_names',
    'imagenet_wnids': 'imagenet.imagenet_label_names',
    'SBDInstanceSegmentationDataset': 'sbd.sbd_instance_segmentation_dataset',
    'SubDataset': 'sub_dataset',
    'split_dataset': 'sub_dataset',
    'split_dataset_random': 'sub_dataset',
    'TransformDataset': 'transform_dataset',
    'TupleDataset': 'tuple_dataset',
    'VOCBboxDataset': 'voc.voc_bbox_dataset',
    'VOCInstanceSegmentationDataset': 'voc.voc_instance_segmentation_dataset',
    'voc_bbox_label_names': 'voc.voc_label_names',
    'voc_semantic_segmentation_label_colors': 'voc.voc_label_names',
    'voc_semantic_segmentation_label_names': 'voc.voc_label_names',
    'VOCSemanticSegmentationDataset': 'voc.voc_semantic_segmentation_dataset',
    'YOLOBboxDataset': 'yolo.yolo_dataset',
}


def __getattr__(name):
    """Import a name's module on first use (PEP 562) and return the name."""
    if name not in _NAMES:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(f'{__name__}.{_NAMES[name]}'), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    """The package's own names and every dataset name, imported or not."""
    return sorted(set(globals()) | set(_NAMES))


__all__ = sorted(_NAMES)
