"""Turn a list of examples into batched arrays on a device."""

import numpy

from cvzoo import errors
from cvzoo.core import backend


def _pad_stack(arrays, padding, least=None):
    """The arrays stacked, each padded with ``padding`` up to the largest shape (and up to
    ``least`` when given)."""
    shape = numpy.max([a.shape for a in arrays] + ([least] if least else []), axis=0)
    out = numpy.full((len(arrays),) + tuple(shape), padding, dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        out[(i,) + tuple(slice(n) for n in a.shape)] = a
    return out


def concat_examples(batch, device=None, padding=None):
    """Stack a list of examples into arrays, field by field, and send them to ``device``.

    Args:
        batch (list): examples; each a tuple of arrays (one field per position), a dict of
            arrays, or a single array.
        device: where the arrays go (``'cpu'``, ``'cuda:0'``, ...; default the CPU).
        padding: None to require equal shapes; otherwise a value (or a tuple with one per
            field) to pad variable-sized arrays (e.g. boxes) up to the largest shape.

    Returns:
        a tuple, dict or array, like one example, with a batch axis added.

    >>> concat_examples([(numpy.zeros(2), 1), (numpy.ones(2), 0)])[1]
    array([1, 0])
    """
    if len(batch) == 0:
        raise ValueError('concat_examples: batch is empty')
    first = batch[0]
    if isinstance(first, tuple):
        paddings = padding if isinstance(padding, tuple) else (padding,) * len(first)
        return tuple(_concat_field([ex[i] for ex in batch], device, paddings[i])
                     for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _concat_field([ex[key] for ex in batch], device, padding) for key in first}
    return _concat_field(batch, device, padding)



def list_fields(batch, device=None, host_fields=(), padding=None):
    """Stack the first field of the examples; keep every other field as a list.

    The converter of train chains that take variable-length fields per image (boxes,
    labels, masks): the images, of one size, become one array on ``device``; each other
    field becomes a list with one entry per example, sent to ``device`` unless its
    position is in ``host_fields`` (what a chain reads on the host, e.g. masks).

    Args:
        batch (list of tuple): the examples.
        device: where the arrays go (default the CPU).
        host_fields (tuple of int): positions of the fields left as they are.
        padding: None to require images of one size; else the value that pads smaller
            images at the bottom and right to the largest.

    Returns:
        tuple: the stacked images, then one list per other field.

    >>> x, boxes = list_fields([(numpy.zeros((3, 2, 2)), numpy.zeros((1, 4))),
    ...                         (numpy.ones((3, 2, 2)), numpy.zeros((2, 4)))])
    >>> x.shape, [b.shape for b in boxes]
    ((2, 3, 2, 2), [(1, 4), (2, 4)])
    """
    _check_tuples(batch, 'list_fields')
    images = _concat_field([example[0] for example in batch], device, padding)
    return (images,) + _per_example_fields(batch, device, host_fields)


class PadImages:
    """Converter: images of different sizes padded into one array by the model's
    ``pad_batch``; every other field kept as a list, as :func:`list_fields` does.

    Args:
        pad_batch (callable): ``pad_batch(list of (3, H, W) arrays)`` -> (B, 3, H', W')
            array (a detector's own, which pads to multiples of its stride).
        host_fields (tuple of int): positions of the fields left on the host.

    >>> pad = PadImages(lambda imgs: numpy.stack([numpy.pad(i, ((0, 0), (0, 4 - i.shape[1]),
    ...                                           (0, 4 - i.shape[2]))) for i in imgs]))
    >>> x, labels = pad([(numpy.ones((3, 2, 3)), numpy.zeros(1)),
    ...                  (numpy.ones((3, 4, 4)), numpy.zeros(2))])
    >>> x.shape, len(labels)
    ((2, 3, 4, 4), 2)
    """

    def __init__(self, pad_batch, host_fields=()):
        self.pad_batch = pad_batch
        self.host_fields = tuple(host_fields)

    def __call__(self, batch, device=None):
        _check_tuples(batch, 'PadImages')
        images = backend.to_device(self.pad_batch([example[0] for example in batch]), device)
        return (images,) + _per_example_fields(batch, device, self.host_fields)


def _check_tuples(batch, name):
    if len(batch) == 0:
        raise ValueError(f'{name}: batch is empty')
    if not isinstance(batch[0], tuple):
        raise TypeError(f'{name}: expected examples that are tuples of fields, got '
                        f'{type(batch[0]).__name__}')


def _per_example_fields(batch, device, host_fields):
    """The fields after the first, one list each (sent to ``device`` unless on the host)."""
    fields = []
    for k in range(1, len(batch[0])):
        values = [example[k] for example in batch]
        if k not in host_fields:
            values = [backend.to_device(value, device) for value in values]
        fields.append(values)
    return tuple(fields)


def _concat_field(values, device, padding):
    arrays = [numpy.asarray(backend.to_numpy(v)) for v in values]
    if padding is None:
        shapes = {a.shape for a in arrays}
        if len(shapes) > 1:
            raise ValueError(
                f'concat_examples: examples have different shapes {sorted(shapes)}; '
                'pass padding= to pad them')
        stacked = numpy.stack(arrays)
    else:
        stacked = _pad_stack(arrays, padding)
    return backend.to_device(stacked, device)


# --- detection batches: images stacked, per-image targets as lists -------------------

def images_and_target_lists(batch, device=None, padding=0):
    """Stack the images of a batch on ``device``; every other field stays a per-image
    list of host values (boxes, labels, sizes, scales), as the detectors' train chains
    take them (the Faster R-CNN and RetinaNet chains; ``YOLOTrainChain`` takes these too,
    while its recipe pads them: :func:`images_and_padded_boxes`).

    Args:
        batch (list of tuple): examples ``(img, field, ...)``, img (C, H, W).
        device: where the images go (default the CPU).
        padding (float): images of different sizes are padded at the bottom and right to
            the largest (0: a prepared image's mean).

    Returns:
        tuple: ``x`` (B, C, H, W) on the device, then one list per further field.

    >>> x, bboxes = images_and_target_lists([(numpy.zeros((3, 2, 2)), numpy.zeros((1, 4))),
    ...                                      (numpy.ones((3, 4, 2)), numpy.zeros((0, 4)))])
    >>> x.shape, [bbox.shape for bbox in bboxes]
    ((2, 3, 4, 2), [(1, 4), (0, 4)])
    """
    _check_tuples(batch, 'images_and_target_lists')
    return list_fields(batch, device, host_fields=range(1, len(batch[0])), padding=padding)


def pad_boxes(bboxes, labels, n_box=1, dtype=numpy.float32, n_class=None):
    """Per-image boxes and labels as two fixed-shape host arrays, padded rows marked.

    The form of the one-stage detectors' train chains that run a step as one CUDA graph
    (``YOLOTrainChain``): every batch of at most ``n_box`` boxes per image has the same
    shapes. An image holding more boxes pads the batch to its own count instead (no box
    is dropped; that batch's shapes differ).

    Args:
        bboxes (list of array): per image (R_i, 4) boxes (host or device arrays).
        labels (list of array): per image (R_i,) int class ids.
        n_box (int): the least R.
        dtype: of the boxes.
        n_class (int or None): when given, every label must be a class id in
            ``[0, n_class)``, checked here on the host (on a GPU an id out of range would
            be wrapped by the gathers and scatters of the loss, without an error).

    Returns:
        tuple: ``bboxes`` (B, R, 4) of ``dtype``, padding rows zero boxes, and ``labels``
        (B, R) int32, padding rows -1; R = max(n_box, most boxes of an image).

    Raises:
        cvzoo.errors.UsageError: a label out of ``[0, n_class)``, naming the image of the
            batch, the label and the class count.

    >>> bbox, label = pad_boxes([numpy.ones((1, 4)), numpy.zeros((0, 4))], [[2], []], 2)
    >>> bbox.shape, label.tolist()
    ((2, 2, 4), [[2, -1], [-1, -1]])
    """
    bboxes = [numpy.asarray(backend.to_numpy(b), dtype).reshape(-1, 4) for b in bboxes]
    labels = [numpy.asarray(backend.to_numpy(lb), numpy.int32).reshape(-1) for lb in labels]
    if len(bboxes) != len(labels):
        raise ValueError(f'pad_boxes: {len(bboxes)} images of boxes but {len(labels)} of '
                         'labels')
    for i, (bbox, label) in enumerate(zip(bboxes, labels)):
        if len(bbox) != len(label):
            raise ValueError(f'pad_boxes: image {i} has {len(bbox)} boxes but {len(label)} '
                             'labels')
        if n_class is not None and ((label < 0) | (label >= n_class)).any():
            bad = label[(label < 0) | (label >= n_class)][0]
            raise errors.UsageError(
                f'labels: image {i} of the batch has the label {bad}, not a class id of a '
                f'model of {n_class} classes (0 to {n_class - 1})')
    return _pad_stack(bboxes, 0, (n_box, 4)), _pad_stack(labels, -1, (n_box,))


def images_and_padded_boxes(batch, device=None, n_box=1, padding=0, n_class=None):
    """Stack the images of ``(img, bbox, label)`` examples and pad their boxes and labels
    to fixed shapes (:func:`pad_boxes`), all on ``device``: what ``YOLOTrainChain`` takes,
    so that a training step can be one CUDA graph.

    Args:
        batch (list of tuple): examples ``(img, bbox, label)``, img (C, H, W), bbox
            (R_i, 4), label (R_i,).
        device: where the arrays go (default the CPU).
        n_box (int): the least boxes per image of the padded arrays.
        padding (float): images of different sizes are padded at the bottom and right to
            the largest.
        n_class (int or None): the class count the labels are checked against
            (:func:`pad_boxes`).

    Returns:
        tuple: ``x`` (B, C, H, W), ``bboxes`` (B, R, 4) float32 (zero boxes padding) and
        ``labels`` (B, R) int32 (-1 padding).

    >>> x, bbox, label = images_and_padded_boxes(
    ...     [(numpy.zeros((3, 2, 2)), numpy.ones((1, 4)), numpy.array([1]))], n_box=3)
    >>> x.shape, bbox.shape, label.tolist()
    ((1, 3, 2, 2), (1, 3, 4), [[1, -1, -1]])
    """
    _check_tuples(batch, 'images_and_padded_boxes')
    if len(batch[0]) != 3:
        raise ValueError('images_and_padded_boxes: expected examples (img, bbox, label), got '
                         f'{len(batch[0])} fields')
    images = _concat_field([example[0] for example in batch], device, padding)
    bboxes, labels = pad_boxes([example[1] for example in batch],
                               [example[2] for example in batch], n_box, n_class=n_class)
    return images, backend.to_device(bboxes, device), backend.to_device(labels, device)


# --- R-CNN instance segmentation and keypoint batches ---------------------------------

def field_lists(batch, device=None, host_fields=()):
    """Every field of the examples as a list, one entry per example: the images too,
    which may differ in size (FCIS trains one image at a time, each at its own size).

    Args:
        batch (list of tuple): the examples.
        device: where the fields go (default the CPU).
        host_fields (tuple of int): positions of the fields left on the host (e.g. masks).

    Returns:
        tuple: one list per field.

    >>> imgs, labels = field_lists([(numpy.zeros((3, 2, 2)), 1), (numpy.ones((3, 4, 2)), 0)],
    ...                            host_fields=(1,))
    >>> [img.shape for img in imgs], labels
    ([(3, 2, 2), (3, 4, 2)], [1, 0])
    """
    _check_tuples(batch, 'field_lists')
    images = [backend.to_device(example[0], device) for example in batch]
    return (images,) + _per_example_fields(batch, device, host_fields)
