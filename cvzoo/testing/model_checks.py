"""The predict() contract of DESIGN.md as executable checks, one per task.

Each check calls ``model.predict`` on the given images (any input kind predict accepts)
and asserts the shapes, dtypes and value ranges of what comes back. Model tests and users
who add their own models call them.

>>> # assert_is_detection_model(model, [img_a, img_b], n_fg_class=20)
"""

import numpy


def _n_images(imgs):
    return len(imgs)


def _image_size(img):
    """(H, W) of an image given as CHW float array or HWC uint8 array."""
    if hasattr(img, 'size') and hasattr(img, 'mode'):  # a PIL image
        return img.size[1], img.size[0]
    img = numpy.asarray(img)
    if img.dtype == numpy.uint8:
        return img.shape[0], img.shape[1]
    return img.shape[1], img.shape[2]


def _check_host_array(name, array, ndim, dtype):
    assert isinstance(array, numpy.ndarray), f'{name}: expected a NumPy array, got {type(array)}'
    assert array.ndim == ndim, f'{name}: expected {ndim} axes, got shape {array.shape}'
    assert array.dtype == dtype, f'{name}: expected {numpy.dtype(dtype)}, got {array.dtype}'


def assert_is_classification_model(model, imgs, n_class):
    """Check ``probs = model.predict(imgs)``: (B, n_class) float32 rows summing to 1."""
    probs = model.predict(imgs)
    _check_host_array('probs', probs, 2, numpy.float32)
    assert probs.shape == (_n_images(imgs), n_class), f'probs: shape {probs.shape}'
    assert (probs >= 0).all() and (probs <= 1).all(), 'probs: values outside [0, 1]'
    numpy.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-4,
                                  err_msg='probs: rows do not sum to 1')


def _check_boxes(bbox, size, i):
    _check_host_array(f'bboxes[{i}]', bbox, 2, numpy.float32)
    assert bbox.shape[1] == 4, f'bboxes[{i}]: expected (R, 4), got {bbox.shape}'
    H, W = size
    assert (bbox[:, 0] <= bbox[:, 2]).all() and (bbox[:, 1] <= bbox[:, 3]).all(), \
        f'bboxes[{i}]: x_min > x_max or y_min > y_max'
    assert (bbox >= 0).all() and (bbox[:, [0, 2]] <= W).all() and (bbox[:, [1, 3]] <= H).all(), \
        f'bboxes[{i}]: boxes outside the {W}x{H} image'


def _check_labels_scores(labels, scores, n_rows, n_fg_class, i):
    _check_host_array(f'labels[{i}]', labels, 1, numpy.int32)
    _check_host_array(f'scores[{i}]', scores, 1, numpy.float32)
    assert len(labels) == len(scores) == n_rows, f'image {i}: lengths differ'
    assert ((labels >= 0) & (labels < n_fg_class)).all(), f'labels[{i}]: outside [0, {n_fg_class})'
    assert ((scores >= 0) & (scores <= 1)).all(), f'scores[{i}]: outside [0, 1]'


def assert_is_detection_model(model, imgs, n_fg_class):
    """Check ``bboxes, labels, scores = model.predict(imgs)`` and use_preset."""
    bboxes, labels, scores = model.predict(imgs)
    assert len(bboxes) == len(labels) == len(scores) == _n_images(imgs)
    for i, img in enumerate(imgs):
        _check_boxes(bboxes[i], _image_size(img), i)
        _check_labels_scores(labels[i], scores[i], len(bboxes[i]), n_fg_class, i)
    for preset in ('visualize', 'evaluate'):
        model.use_preset(preset)
        assert 0 <= model.score_thresh <= 1 and 0 <= model.nms_thresh <= 1


def assert_is_semantic_segmentation_model(model, imgs, n_class):
    """Check ``labels = model.predict(imgs)``: (H, W) int32 maps at each input's size."""
    labels = model.predict(imgs)
    assert len(labels) == _n_images(imgs)
    for i, (label, img) in enumerate(zip(labels, imgs)):
        _check_host_array(f'labels[{i}]', label, 2, numpy.int32)
        assert label.shape == _image_size(img), f'labels[{i}]: shape {label.shape}'
        assert ((label >= 0) & (label < n_class)).all(), f'labels[{i}]: outside [0, {n_class})'


def assert_is_instance_segmentation_model(model, imgs, n_fg_class):
    """Check ``masks, labels, scores = model.predict(imgs)`` and use_preset."""
    masks, labels, scores = model.predict(imgs)
    assert len(masks) == len(labels) == len(scores) == _n_images(imgs)
    for i, img in enumerate(imgs):
        _check_host_array(f'masks[{i}]', masks[i], 3, numpy.bool_)
        assert masks[i].shape[1:] == _image_size(img), f'masks[{i}]: shape {masks[i].shape}'
        _check_labels_scores(labels[i], scores[i], len(masks[i]), n_fg_class, i)
    for preset in ('visualize', 'evaluate'):
        model.use_preset(preset)
        assert 0 <= model.score_thresh <= 1 and 0 <= model.nms_thresh <= 1
