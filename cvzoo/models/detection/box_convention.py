"""to_box_convention: a detector's training targets in the box convention of its weights.

cvzoo's datasets give continuous boxes: ``x_max`` and ``y_max`` are the edge after the
last pixel. Weights learned on inclusive boxes (``x_max``, ``y_max`` the last pixel:
ChainerCV's and Darknet's VOC weights, ``Weights.box_convention``) predict boxes a pixel
short of that edge, which ``Detector.predict`` converts back
(:func:`cvzoo.models.detection.detector.as_continuous`). The transforms of the
training recipes (the data boundary: ``SSDTransform``, ``YOLOTransform``,
``ResizeFlipTransform``) pass the ground truth boxes through :func:`to_box_convention`
with the model's ``box_convention``, once, so that fine-tuning such weights keeps
teaching the boxes they learned, and the trained model still predicts in the convention
it records. The train chains take the boxes as they are.
"""

from cvzoo.core import backend
from cvzoo.models.weights.weights_schema import BOX_CONVENTIONS


def to_box_convention(bbox, box_convention):
    """Continuous boxes (cvzoo's datasets) in ``box_convention``, on their own device.

    ``'inclusive'`` moves ``x_max`` and ``y_max`` back by 1 pixel, and no further than
    ``x_min``, ``y_min`` (a box narrower than a pixel keeps zero width, not a negative
    one); ``'continuous'`` returns the boxes as they are. The transforms call this on
    the boxes in the pixels of the network input, so for a resized image the shift is
    one input pixel (``1 / scale`` of the image's own pixels, which is where
    ``Detector.predict`` adds its pixel back).

    Args:
        bbox (array): (..., 4) float (x_min, y_min, x_max, y_max), NumPy or on a device.
        box_convention (str): 'continuous' or 'inclusive', the model's ``box_convention``.

    Returns:
        array: boxes of ``bbox``'s shape, dtype and device.

    Raises:
        ValueError: an unknown ``box_convention``.

    >>> import numpy
    >>> bbox = numpy.array([[0, 2, 10, 6], [4, 4, 4.5, 8]], numpy.float32)
    >>> to_box_convention(bbox, 'inclusive')
    array([[0., 2., 9., 5.],
           [4., 4., 4., 7.]], dtype=float32)
    >>> to_box_convention(bbox, 'continuous') is bbox
    True
    """
    if box_convention not in BOX_CONVENTIONS:
        raise ValueError(f'box_convention: expected one of {BOX_CONVENTIONS}, got '
                         f'{box_convention!r}')
    if box_convention == 'continuous':
        return bbox
    xp = backend.get_array_module(bbox)
    return xp.concatenate((bbox[..., :2], xp.maximum(bbox[..., 2:] - 1, bbox[..., :2])),
                          axis=-1)
