"""Turn a list of examples into batched arrays on a device."""

import numpy

from cvzoo.core import backend


def _pad_stack(arrays, padding):
    shape = numpy.max([a.shape for a in arrays], axis=0)
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
    take them (``YOLOTrainChain``, the Faster R-CNN and RetinaNet chains).

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
    if len(batch) == 0:
        raise ValueError('images_and_target_lists: batch is empty')
    x = _concat_field([example[0] for example in batch], device, padding)
    return (x,) + tuple([example[i] for example in batch] for i in range(1, len(batch[0])))
