"""A user's data on disk, in the formats annotation tools export, read for training.

>>> from cvzoo.datasets.formats import detect_format, load_training_data, FORMATS
>>> FORMATS[:4]
('class_folders', 'voc', 'coco', 'yolo')

``detect_format(path, task=None)`` tells the format; ``load_training_data(path, ...)``
returns the training and validation sets in the task's target layout with the class
names. One module per format says how it is recognised and split: class_folders,
voc_folder (VOC's layout; voc_flat: xml files beside the images), coco_files, yolo_files,
segmentation_folders. Inside ``with parse_once():`` a COCO json is parsed once, however
many of these calls read it (each call is such a block of its own).
"""

from cvzoo.datasets.coco.coco_annotations import parse_once
from cvzoo.datasets.formats.format_detection import FORMAT_TASKS, FORMATS, TASKS, detect_format
from cvzoo.datasets.formats.load_training_data import TrainingData, load_training_data

__all__ = ['FORMATS', 'FORMAT_TASKS', 'TASKS', 'TrainingData', 'detect_format',
           'load_training_data', 'parse_once']
