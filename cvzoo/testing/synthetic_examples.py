"""A few random examples of each task's layout (DESIGN.md), for training tests.

:func:`synthetic_examples` gives what ``cvzoo.training.train`` takes for any task: the
dataset tuples of the predict() contract, boxes as (x_min, y_min, x_max, y_max).

>>> examples = synthetic_examples('detection', n_class=2, n=3)
>>> len(examples), [field.shape for field in examples[0]]
(3, [(3, 40, 56), (1, 4), (1,)])
"""

import numpy

TASKS = ('classification', 'detection', 'semantic_segmentation', 'instance_segmentation',
         'keypoint_detection')


def synthetic_examples(task, n_class, n=4, size=(40, 56), seed=0, n_point=17):
    """``n`` examples of ``task``: a random image with one object (a box, its filled mask
    and ``n_point`` points in it) or, for classification and semantic segmentation, a
    label per image or per pixel (a few pixels -1, ignored).

    Args:
        task (str): one of :data:`TASKS`.
        n_class (int): the labels drawn are in [0, n_class) (foreground classes for the
            tasks with boxes).
        n (int): the number of examples.
        size (tuple of int): (H, W) of the images.
        seed (int): of the draws.
        n_point (int): keypoints per instance (keypoint detection).

    Returns:
        list of tuple: the examples.
    """
    if task not in TASKS:
        raise ValueError(f'task: expected one of {TASKS}, got {task!r}')
    rng = numpy.random.RandomState(seed)
    return [_example(task, n_class, size, rng, n_point, k) for k in range(n)]


def _example(task, n_class, size, rng, n_point, k):
    H, W = size
    img = rng.uniform(0, 255, (3, H, W)).astype(numpy.float32)
    label = numpy.array([k % n_class], numpy.int32)
    if task == 'classification':
        return img, label[0]
    if task == 'semantic_segmentation':
        label_map = rng.randint(0, n_class, (H, W)).astype(numpy.int32)
        label_map[:2, :2] = -1
        return img, label_map
    x_min, y_min = rng.uniform(0, 0.3) * W, rng.uniform(0, 0.3) * H
    x_max, y_max = x_min + rng.uniform(0.4, 0.6) * W, y_min + rng.uniform(0.4, 0.6) * H
    bbox = numpy.array([[x_min, y_min, x_max, y_max]], numpy.float32)
    if task == 'detection':
        return img, bbox, label
    if task == 'instance_segmentation':
        mask = numpy.zeros((1, H, W), bool)
        mask[0, int(y_min):int(numpy.ceil(y_max)), int(x_min):int(numpy.ceil(x_max))] = True
        return img, mask, label
    corner, side = bbox[:, None, :2], bbox[:, None, 2:] - bbox[:, None, :2]
    point = (corner + side * rng.uniform(0.1, 0.9, (1, n_point, 2))).astype(numpy.float32)
    visible = numpy.ones((1, n_point), bool)
    return img, point, visible, label, bbox
