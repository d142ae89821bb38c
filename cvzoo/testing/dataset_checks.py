"""The dataset conventions of DESIGN.md as executable checks, one per task.

Each check reads examples of a dataset (all of them, or ``n_example`` drawn at random
with numpy.random) and raises AssertionError naming the example index and the field
that breaks the contract. Dataset tests and users who add their own datasets call them.

    task                   example                 check
    detection              img, bbox, label        assert_is_bbox_dataset
    semantic segmentation  img, label              assert_is_semantic_segmentation_dataset
    classification         img, label              assert_is_label_dataset
    instance segmentation  img, mask, label        assert_is_instance_segmentation_dataset

Extras that follow these fields (difficult flags, crowd flags, areas) are not checked.

>>> img = numpy.zeros((3, 4, 6), numpy.float32)
>>> bbox = numpy.array([[0, 1, 3, 4]], numpy.float32)
>>> assert_is_bbox_dataset([(img, bbox, numpy.array([1], numpy.int32))], n_fg_class=2)
>>> assert_is_bbox_dataset([(img, bbox, numpy.array([2], numpy.int32))], n_fg_class=2)
Traceback (most recent call last):
    ...
AssertionError: example 0: label: expected values in [0, 2), got [2, 2]
"""

import numbers

import numpy


def _fail(i, field, what):
    raise AssertionError(f'example {i}: {field}: {what}')


def _check_count(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f'{name}: expected an int, got {type(value).__name__}')
    if value < 1:
        raise ValueError(f'{name}: expected a positive int, got {value}')


def _indices(dataset, n_example):
    """All indexes, or ``n_example`` distinct ones drawn with numpy.random, sorted."""
    if n_example is not None:
        _check_count('n_example', n_example)
    n = len(dataset)
    if n == 0:
        raise AssertionError('dataset: it is empty, so no example can be checked')
    if n_example is None or n_example >= n:
        return range(n)
    return sorted(numpy.random.choice(n, n_example, replace=False).tolist())


def _example(dataset, i, n_field, fields):
    example = dataset[i]
    if not isinstance(example, tuple):
        _fail(i, 'example', f'expected a tuple ({fields}), got {type(example).__name__}')
    if len(example) < n_field:
        _fail(i, 'example', f'expected at least {n_field} fields ({fields}), '
                            f'got {len(example)}')
    return example


def _check_array(i, field, array, ndim, dtype):
    if not isinstance(array, numpy.ndarray):
        _fail(i, field, f'expected a NumPy array, got {type(array).__name__}')
    if array.ndim != ndim:
        _fail(i, field, f'expected {ndim} axes, got shape {array.shape}')
    if array.dtype != dtype:
        _fail(i, field, f'expected dtype {numpy.dtype(dtype)}, got {array.dtype}')


def _check_image(i, img, color=True):
    """Check a (C, H, W) float32 image in [0, 255]; return its (H, W)."""
    _check_array(i, 'img', img, 3, numpy.float32)
    n_channel = 3 if color else 1
    if img.shape[0] != n_channel:
        _fail(i, 'img', f'expected {n_channel} channels first, (C, H, W), got {img.shape}')
    if img.size and not (numpy.isfinite(img).all() and img.min() >= 0 and img.max() <= 255):
        _fail(i, 'img', f'expected values in [0, 255], got [{img.min()}, {img.max()}]')
    return img.shape[1:]


def _check_class_ids(i, field, label, low, high):
    if label.size and (label.min() < low or label.max() >= high):
        _fail(i, field, f'expected values in [{low}, {high}), got '
                        f'[{label.min()}, {label.max()}]')


def _check_instance_labels(i, label, n_instance, n_fg_class):
    _check_array(i, 'label', label, 1, numpy.int32)
    if len(label) != n_instance:
        _fail(i, 'label', f'expected {n_instance} labels (one per instance), got {len(label)}')
    _check_class_ids(i, 'label', label, 0, n_fg_class)


def _check_bbox(i, bbox, size):
    _check_array(i, 'bbox', bbox, 2, numpy.float32)
    if bbox.shape[1] != 4:
        _fail(i, 'bbox', f'expected shape (R, 4), got {bbox.shape}')
    if not numpy.isfinite(bbox).all():
        _fail(i, 'bbox', 'holds nan or inf')
    inverted = numpy.flatnonzero((bbox[:, 0] > bbox[:, 2]) | (bbox[:, 1] > bbox[:, 3]))
    if len(inverted):
        _fail(i, 'bbox', f'box {inverted[0]} has x_min > x_max or y_min > y_max: '
                         f'{bbox[inverted[0]].tolist()}')
    H, W = size
    outside = numpy.flatnonzero((bbox < 0).any(axis=1) | (bbox[:, 2] > W) | (bbox[:, 3] > H))
    if len(outside):
        _fail(i, 'bbox', f'box {outside[0]} {bbox[outside[0]].tolist()} is outside the '
                         f'image (W={W}, H={H})')


def assert_is_bbox_dataset(dataset, n_fg_class, n_example=None):
    """Check that ``dataset[i]`` is ``img, bbox, label, ...`` as DESIGN.md says.

        img    (3, H, W) float32  RGB in [0, 255]
        bbox   (R, 4) float32     (x_min, y_min, x_max, y_max), x_min <= x_max,
                                  y_min <= y_max, inside [0, W] x [0, H]
        label  (R,) int32         in [0, n_fg_class)

    Args:
        dataset: anything with ``len`` and integer indexing.
        n_fg_class (int): the number of foreground classes.
        n_example (int or None): check this many examples drawn at random; None: all.

    Raises:
        AssertionError: naming the example index and the field.
    """
    _check_count('n_fg_class', n_fg_class)
    for i in _indices(dataset, n_example):
        img, bbox, label = _example(dataset, i, 3, 'img, bbox, label')[:3]
        size = _check_image(i, img)
        _check_bbox(i, bbox, size)
        _check_instance_labels(i, label, len(bbox), n_fg_class)


def assert_is_semantic_segmentation_dataset(dataset, n_class, n_example=None):
    """Check that ``dataset[i]`` is ``img, label, ...`` for semantic segmentation.

        img    (3, H, W) float32  RGB in [0, 255]
        label  (H, W) int32       in [-1, n_class), -1 = ignore; the image's size

    Args:
        dataset: anything with ``len`` and integer indexing.
        n_class (int): the number of classes (background included when it is one).
        n_example (int or None): check this many examples drawn at random; None: all.

    Raises:
        AssertionError: naming the example index and the field.
    """
    _check_count('n_class', n_class)
    for i in _indices(dataset, n_example):
        img, label = _example(dataset, i, 2, 'img, label')[:2]
        size = _check_image(i, img)
        _check_array(i, 'label', label, 2, numpy.int32)
        if label.shape != size:
            _fail(i, 'label', f'expected the image size {size}, got {label.shape}')
        _check_class_ids(i, 'label', label, -1, n_class)


def assert_is_label_dataset(dataset, n_class, n_example=None, color=True):
    """Check that ``dataset[i]`` is ``img, label, ...`` for classification.

        img    (3, H, W) float32  RGB in [0, 255] ((1, H, W) when color=False)
        label  () int32           in [0, n_class); a NumPy int32 scalar or 0-d array

    Args:
        dataset: anything with ``len`` and integer indexing.
        n_class (int): the number of classes.
        n_example (int or None): check this many examples drawn at random; None: all.
        color (bool): the images are RGB (True) or one channel (False).

    Raises:
        AssertionError: naming the example index and the field.
    """
    _check_count('n_class', n_class)
    for i in _indices(dataset, n_example):
        img, label = _example(dataset, i, 2, 'img, label')[:2]
        _check_image(i, img, color)
        if not isinstance(label, (numpy.ndarray, numpy.generic)) or label.shape != ():
            _fail(i, 'label', f'expected a () int32 NumPy scalar, got {label!r}')
        if label.dtype != numpy.int32:
            _fail(i, 'label', f'expected dtype int32, got {label.dtype}')
        if not 0 <= label < n_class:
            _fail(i, 'label', f'expected a value in [0, {n_class}), got {label}')


def assert_is_instance_segmentation_dataset(dataset, n_fg_class, n_example=None):
    """Check that ``dataset[i]`` is ``img, mask, label, ...`` for instance segmentation.

        img    (3, H, W) float32  RGB in [0, 255]
        mask   (R, H, W) bool     one mask per instance, the image's size
        label  (R,) int32         in [0, n_fg_class)

    Args:
        dataset: anything with ``len`` and integer indexing.
        n_fg_class (int): the number of foreground classes.
        n_example (int or None): check this many examples drawn at random; None: all.

    Raises:
        AssertionError: naming the example index and the field.
    """
    _check_count('n_fg_class', n_fg_class)
    for i in _indices(dataset, n_example):
        img, mask, label = _example(dataset, i, 3, 'img, mask, label')[:3]
        size = _check_image(i, img)
        _check_array(i, 'mask', mask, 3, numpy.bool_)
        if mask.shape[1:] != size:
            _fail(i, 'mask', f'expected (R, {size[0]}, {size[1]}) (the image size), '
                             f'got {mask.shape}')
        _check_instance_labels(i, label, len(mask), n_fg_class)
