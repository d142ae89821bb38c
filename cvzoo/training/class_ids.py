"""The class ids of a training set, checked on the host as each example is read.

On a GPU a class id out of range is no error: the losses' gathers (softmax cross entropy,
SSD's and YOLO's targets) wrap it to some other class and training goes on with wrong
targets. ``cvzoo.training.train`` therefore reads its training set through
:class:`CheckedClassIds`, which refuses an example whose class ids are not those of the
run's ``label_names``, naming the example, before the recipe's transform and any device
see it. The datasets that ``cvzoo train --data`` reads cannot hold such an id; a dataset
object of one's own can.

Where each task's examples hold their class ids (DESIGN.md's layouts):

=======================  ==============================  =========================
task                     example                         class ids
=======================  ==============================  =========================
classification           ``(img, label)``                ``label``
semantic_segmentation    ``(img, label_map)``            ``label_map``, -1 ignored
detection                ``(img, bbox, label)``          ``label``
instance_segmentation    ``(img, mask, label)``          ``label``
keypoint_detection       ``(img, point, visible, label,  ``label``
                         bbox)``
=======================  ==============================  =========================

>>> dataset = CheckedClassIds([(None, 0), (None, 3)], 'classification', 3)
>>> dataset[0]
(None, 0)
>>> dataset[1]  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cvzoo.errors.UsageError: train_dataset: example 1 holds the class id 3 (its label), ...
"""

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin

# task: (the field of the class ids, what the message calls it, the id that means ignored)
CLASS_ID_FIELDS = {
    'classification': (1, 'its label', None),
    'semantic_segmentation': (1, 'a pixel of its label map; -1 marks ignored pixels', -1),
    'detection': (2, 'its labels', None),
    'instance_segmentation': (2, 'its labels', None),
    'keypoint_detection': (3, 'its labels', None),
}


class CheckedClassIds(dataset_mixin.DatasetMixin):
    """``dataset`` whose examples are checked to hold class ids of ``n_class`` classes.

    Args:
        dataset: examples of ``task``'s layout (a list or any dataset).
        task (str): a key of :data:`CLASS_ID_FIELDS`.
        n_class (int): the classes of the run (``len(label_names)``).

    Raises (when an example is read):
        cvzoo.errors.UsageError: a class id outside ``[0, n_class)`` (other than the
            task's ignored id), naming the example's index, the id and the class count.
    """

    def __init__(self, dataset, task, n_class):
        self._dataset = dataset
        self._field, self._what, self._ignored = CLASS_ID_FIELDS[task]
        self._n_class = n_class

    def __len__(self):
        return len(self._dataset)

    def get_example(self, i):
        example = self._dataset[i]
        if isinstance(example, (tuple, list)) and len(example) > self._field:
            self._check(i, numpy.asarray(example[self._field]))
        return example

    def _check(self, i, ids):
        wrong = (ids < 0) | (ids >= self._n_class)
        if self._ignored is not None:
            wrong &= ids != self._ignored
        if wrong.any():
            bad = ids[wrong].flat[0]
            raise errors.UsageError(
                f'train_dataset: example {i} holds the class id {bad} ({self._what}), not '
                f'one of the {self._n_class} classes of label_names (0 to '
                f'{self._n_class - 1})')
