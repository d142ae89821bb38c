"""ResizeFlipTransform: the training augmentation of the R-CNN detectors and RetinaNet.

One example as the references make it (ChainerCV's ``examples/faster_rcnn`` and
``examples/fpn``, torchvision's ``references/detection``): the image resized as
predict() does (``model.prepare``), the boxes resized with it, a horizontal flip with
probability 1/2, the image padded as ``model.pad_batch`` pads (FPN), and the boxes given
in the model's box convention, once, here: the train chains take them as they are.
"""

import numpy

from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.transforms.bbox.flip_bbox import flip_bbox
from cvzoo.transforms.bbox.resize_bbox import resize_bbox

# what an example carries after (x, bbox, label): the train chain's last argument
EXTRAS = ('size', 'scale', None)


class ResizeFlipTransform:
    """(img, bbox, label) -> the train chain's ``(x, bbox, label[, size or scale])``.

    Args:
        model (Detector): the model being trained; its ``prepare`` resizes and
            normalises, its ``pad_batch`` pads to ``pad_stride`` (FPN), its
            ``box_convention`` is the boxes'.
        seed (int or None): of the flip draws.
        augment (bool): False: no flip.
        extra (str or None): ``'size'``, the image's (H, W) after resizing (the FPN train
            chains), ``'scale'``, the resize factor (the VGG16 train chain), or None
            (RetinaNet).

    Called with ``(img, bbox, label)`` (img (3, H, W) float32 RGB in [0, 255], bbox
    (R, 4) continuous, label (R,); further fields are dropped). Returns ``x`` (3, H', W')
    float32, ``bbox`` (R, 4) float32 in pixels of x, in the model's box convention,
    ``label`` (R,) int32 and the ``extra``.

    >>> from cvzoo.testing.small_models import build_small_model
    >>> _, model = build_small_model('faster_rcnn_vgg16')
    >>> transform = ResizeFlipTransform(model, extra='scale')
    >>> x, bbox, label, scale = transform((numpy.zeros((3, 32, 48), numpy.float32),
    ...                                    numpy.array([[0, 0, 16, 8]], numpy.float32), [1]))
    >>> x.shape, scale
    ((3, 64, 96), 2.0)
    """

    def __init__(self, model, seed=0, *, augment=True, extra='size'):
        if extra not in EXTRAS:
            raise ValueError(f'extra: expected one of {EXTRAS}, got {extra!r}')
        self.model, self.rng = model, numpy.random.RandomState(seed)
        self.augment, self.extra = augment, extra

    def __call__(self, in_data):
        img, bbox, label = in_data[:3]
        img = numpy.asarray(img, numpy.float32)
        x = self.model.prepare(img)
        bbox = resize_bbox(numpy.asarray(bbox, numpy.float32).reshape(-1, 4),
                           img.shape[1:], x.shape[1:])
        if self.augment and self.rng.rand() < 0.5:
            x = x[:, :, ::-1]
            bbox = flip_bbox(bbox, x.shape[1:], x_flip=True)
        size = x.shape[1:]
        x = self.model.pad_batch([numpy.ascontiguousarray(x)])[0]
        bbox = to_box_convention(bbox.astype(numpy.float32), self.model.box_convention)
        example = (x, bbox, numpy.asarray(label, numpy.int32).reshape(-1))
        if self.extra == 'size':
            return example + (size,)
        if self.extra == 'scale':
            return example + (size[1] / img.shape[2],)
        return example
