"""Dataset loaders (lazy: images are read when an example is asked for) and combinators."""

from cvzoo.datasets.ade20k.ade20k_label_names import ade20k_semantic_segmentation_label_names
from cvzoo.datasets.ade20k.ade20k_semantic_segmentation_dataset import (
    ADE20KSemanticSegmentationDataset)
from cvzoo.datasets.camvid.camvid_dataset import CamVidDataset
from cvzoo.datasets.camvid.camvid_label_names import camvid_label_colors, camvid_label_names
from cvzoo.datasets.cityscapes.cityscapes_label_names import (
    cityscapes_semantic_segmentation_label_colors, cityscapes_semantic_segmentation_label_names)
from cvzoo.datasets.cityscapes.cityscapes_semantic_segmentation_dataset import (
    CityscapesSemanticSegmentationDataset)
from cvzoo.datasets.coco.coco_bbox_dataset import COCOBboxDataset
from cvzoo.datasets.coco.coco_instance_segmentation_dataset import (
    COCOInstanceSegmentationDataset)
from cvzoo.datasets.coco.coco_label_names import (coco_bbox_label_names,
                                                  coco_category_id_to_label,
                                                  coco_instance_segmentation_label_names)
from cvzoo.datasets.concatenated_dataset import ConcatenatedDataset
from cvzoo.datasets.dataset_mixin import DatasetMixin
from cvzoo.datasets.image_folder.directory_parsing_label_dataset import (
    DirectoryParsingLabelDataset)
from cvzoo.datasets.image_folder.image_label_directory_dataset import ImageLabelDirectoryDataset
from cvzoo.datasets.image_folder.labeled_image_dataset import LabeledImageDataset
from cvzoo.datasets.imagenet.imagenet_label_names import imagenet_label_names, imagenet_wnids
from cvzoo.datasets.sbd.sbd_instance_segmentation_dataset import (
    SBDInstanceSegmentationDataset)
from cvzoo.datasets.sub_dataset import SubDataset, split_dataset, split_dataset_random
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.datasets.tuple_dataset import TupleDataset
from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset
from cvzoo.datasets.voc.voc_instance_segmentation_dataset import VOCInstanceSegmentationDataset
from cvzoo.datasets.voc.voc_label_names import (voc_bbox_label_names,
                                                voc_semantic_segmentation_label_colors,
                                                voc_semantic_segmentation_label_names)
from cvzoo.datasets.voc.voc_semantic_segmentation_dataset import (
    VOCSemanticSegmentationDataset)
