"""Flip an image at random."""

import numpy

from cvzoo.transforms.image.flip import flip


def random_flip(img, y_random=False, x_random=False, return_param=False, copy=False,
                random_state=None):
    """Flip vertically and/or horizontally, each with probability 1/2 when enabled.

    Args:
        img (numpy.ndarray): (C, H, W).
        y_random (bool): maybe flip vertically.
        x_random (bool): maybe flip horizontally.
        return_param (bool): also return ``{'y_flip': bool, 'x_flip': bool}`` for
            flip_bbox / flip_point / flip_mask.
        copy (bool): return a copy instead of a view.
        random_state (numpy.random.RandomState or None): the generator drawn from (None:
            NumPy's global one).

    Returns:
        numpy.ndarray, or (numpy.ndarray, dict).
    """
    rng = numpy.random if random_state is None else random_state
    y_flip = bool(y_random and rng.randint(2))
    x_flip = bool(x_random and rng.randint(2))
    img = flip(img, y_flip=y_flip, x_flip=x_flip, copy=copy)
    if return_param:
        return img, {'y_flip': y_flip, 'x_flip': x_flip}
    return img
