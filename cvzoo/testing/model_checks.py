"""The predict() contract of DESIGN.md as executable checks, one per task.

Each check calls ``model.predict`` once on the given images (any input kind predict
accepts) and asserts what comes back: one entry per image, host NumPy arrays of the
documented shapes and dtypes, finite values in their ranges, labels below the class
count, boxes inside their image and scores by decreasing value (detectors), masks and
label maps at the image's size, one (x, y) point and score per keypoint; and that
predict() leaves the train and backprop settings as it found them. Model tests and users
who add their own models call them.

>>> from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
>>> imgs = [numpy.zeros((3, 40, 50), numpy.float32), numpy.zeros((3, 30, 60), numpy.float32)]
>>> assert_is_detection_model(SSDTiny(n_fg_class=2), imgs, n_fg_class=2)
"""

import numpy

from cvzoo.core import config


def _image_size(img):
    """(H, W) of an image given as CHW float array, HWC uint8 array or PIL image."""
    if hasattr(img, 'size') and hasattr(img, 'mode'):  # a PIL image
        return img.size[1], img.size[0]
    img = numpy.asarray(img)
    if img.dtype == numpy.uint8:
        return img.shape[0], img.shape[1]
    return img.shape[1], img.shape[2]


def _predict(model, imgs):
    """``model.predict(imgs)``, checking that it restores the train and backprop settings."""
    before = (config.config.train, config.config.enable_backprop)
    result = model.predict(imgs)
    after = (config.config.train, config.config.enable_backprop)
    assert after == before, \
        f'predict: (train, enable_backprop) was {before} before the call, {after} after'
    return result


def _check_per_image(name, values, n_image):
    assert isinstance(values, list), f'{name}: expected a list, got {type(values).__name__}'
    assert len(values) == n_image, f'{name}: expected one entry per image ({n_image}), ' \
        f'got {len(values)}'


def _check_host_array(name, array, ndim, dtype):
    assert isinstance(array, numpy.ndarray), \
        f'{name}: expected a NumPy array on the host, got {type(array)}'
    assert array.ndim == ndim, f'{name}: expected {ndim} axes, got shape {array.shape}'
    assert array.dtype == dtype, f'{name}: expected {numpy.dtype(dtype)}, got {array.dtype}'
    if array.dtype.kind == 'f':
        assert numpy.isfinite(array).all(), f'{name}: values that are not finite'


def _check_labels(name, label, n_class):
    outside = (label < 0) | (label >= n_class)
    assert not outside.any(), \
        f'{name}: values outside [0, {n_class}): {numpy.unique(label[outside])}'


def _check_presets(model):
    for preset in ('visualize', 'evaluate'):
        model.use_preset(preset)
        assert 0 <= model.score_thresh <= 1, \
            f'use_preset({preset!r}): score_thresh {model.score_thresh} outside [0, 1]'
        assert 0 <= model.nms_thresh <= 1, \
            f'use_preset({preset!r}): nms_thresh {model.nms_thresh} outside [0, 1]'


def assert_is_classification_model(model, imgs, n_class):
    """Check ``probs = model.predict(imgs)``: (B, n_class) float32 rows summing to 1."""
    imgs = list(imgs)
    probs = _predict(model, imgs)
    _check_host_array('probs', probs, 2, numpy.float32)
    assert probs.shape == (len(imgs), n_class), \
        f'probs: expected shape {(len(imgs), n_class)}, got {probs.shape}'
    assert (probs >= 0).all() and (probs <= 1).all(), 'probs: values outside [0, 1]'
    numpy.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-4,
                                  err_msg='probs: rows do not sum to 1')


def _check_boxes(name, bbox, size):
    _check_host_array(name, bbox, 2, numpy.float32)
    assert bbox.shape[1] == 4, f'{name}: expected (R, 4), got {bbox.shape}'
    H, W = size
    assert (bbox[:, 0] <= bbox[:, 2]).all() and (bbox[:, 1] <= bbox[:, 3]).all(), \
        f'{name}: x_min > x_max or y_min > y_max'
    assert (bbox >= 0).all() and (bbox[:, [0, 2]] <= W).all() and (bbox[:, [1, 3]] <= H).all(), \
        f'{name}: boxes outside the {W}x{H} image'


def _check_labels_scores(labels, scores, n_row, n_fg_class, i):
    _check_host_array(f'labels[{i}]', labels, 1, numpy.int32)
    _check_host_array(f'scores[{i}]', scores, 1, numpy.float32)
    assert len(labels) == len(scores) == n_row, \
        f'image {i}: {n_row} boxes or masks, {len(labels)} labels, {len(scores)} scores'
    _check_labels(f'labels[{i}]', labels, n_fg_class)
    assert ((scores >= 0) & (scores <= 1)).all(), f'scores[{i}]: outside [0, 1]'


def assert_is_detection_model(model, imgs, n_fg_class):
    """Check ``bboxes, labels, scores = model.predict(imgs)`` and use_preset.

    Per image: (R, 4) float32 boxes (x_min <= x_max, y_min <= y_max) inside the image,
    (R,) int32 labels in ``[0, n_fg_class)``, (R,) float32 scores in [0, 1] by
    decreasing value, all NumPy arrays on the host.
    """
    imgs = list(imgs)
    bboxes, labels, scores = _predict(model, imgs)
    for name, values in (('bboxes', bboxes), ('labels', labels), ('scores', scores)):
        _check_per_image(name, values, len(imgs))
    for i, img in enumerate(imgs):
        _check_boxes(f'bboxes[{i}]', bboxes[i], _image_size(img))
        _check_labels_scores(labels[i], scores[i], len(bboxes[i]), n_fg_class, i)
        assert (numpy.diff(scores[i]) <= 0).all(), f'scores[{i}]: not in decreasing order'
    _check_presets(model)


def assert_is_semantic_segmentation_model(model, imgs, n_class):
    """Check ``labels = model.predict(imgs)``: (H, W) int32 maps at each input's size,
    values in ``[0, n_class)``."""
    imgs = list(imgs)
    labels = _predict(model, imgs)
    _check_per_image('labels', labels, len(imgs))
    for i, (label, img) in enumerate(zip(labels, imgs)):
        _check_host_array(f'labels[{i}]', label, 2, numpy.int32)
        assert label.shape == _image_size(img), \
            f'labels[{i}]: expected the image size {_image_size(img)}, got {label.shape}'
        _check_labels(f'labels[{i}]', label, n_class)


def assert_is_instance_segmentation_model(model, imgs, n_fg_class):
    """Check ``masks, labels, scores = model.predict(imgs)`` and use_preset: (R, H, W) bool
    masks at each image's size, labels and scores as for detectors."""
    imgs = list(imgs)
    masks, labels, scores = _predict(model, imgs)
    for name, values in (('masks', masks), ('labels', labels), ('scores', scores)):
        _check_per_image(name, values, len(imgs))
    for i, img in enumerate(imgs):
        _check_host_array(f'masks[{i}]', masks[i], 3, numpy.bool_)
        assert masks[i].shape[1:] == _image_size(img), \
            f'masks[{i}]: expected (R,) + the image size {_image_size(img)}, got {masks[i].shape}'
        _check_labels_scores(labels[i], scores[i], len(masks[i]), n_fg_class, i)
    _check_presets(model)


def assert_is_keypoint_detection_model(model, imgs, n_fg_class, n_point=None):
    """Check ``points, point_scores, labels, scores = model.predict(imgs)`` and use_preset:
    per image (R, K, 2) float32 points (x, y) and (R, K) float32 point scores, finite, with
    K = ``n_point`` when given (the same K for every image otherwise), labels and scores
    as for detectors, scores by decreasing value."""
    imgs = list(imgs)
    points, point_scores, labels, scores = _predict(model, imgs)
    for name, values in (('points', points), ('point_scores', point_scores),
                         ('labels', labels), ('scores', scores)):
        _check_per_image(name, values, len(imgs))
    for i in range(len(imgs)):
        _check_host_array(f'points[{i}]', points[i], 3, numpy.float32)
        _check_host_array(f'point_scores[{i}]', point_scores[i], 2, numpy.float32)
        K = points[0].shape[1] if n_point is None else n_point
        assert points[i].shape[1:] == (K, 2), \
            f'points[{i}]: expected (R, {K}, 2), got {points[i].shape}'
        assert point_scores[i].shape == points[i].shape[:2], \
            f'point_scores[{i}]: expected {points[i].shape[:2]}, got {point_scores[i].shape}'
        _check_labels_scores(labels[i], scores[i], len(points[i]), n_fg_class, i)
        assert (numpy.diff(scores[i]) <= 0).all(), f'scores[{i}]: not in decreasing order'
    _check_presets(model)


# the check of each task of the registry (cvzoo.models.registry.TASKS)
ASSERTIONS = {
    'classification': assert_is_classification_model,
    'detection': assert_is_detection_model,
    'semantic_segmentation': assert_is_semantic_segmentation_model,
    'instance_segmentation': assert_is_instance_segmentation_model,
    'keypoint_detection': assert_is_keypoint_detection_model,
}
