"""Mirror instance masks together with their image."""


def flip_mask(mask, y_flip=False, x_flip=False, copy=False):
    """Flip masks as flip(img, y_flip, x_flip) flips the image.

    Masks (R, H, W) and semantic labels given as (1, H, W) flip alike; crop a mask
    by slicing, ``mask[:, y_slice, x_slice]``.

    Args:
        mask (numpy.ndarray): (R, H, W).
        y_flip (bool): flip vertically.
        x_flip (bool): flip horizontally.
        copy (bool): return a copy instead of a view.

    Returns:
        numpy.ndarray: (R, H, W).
    """
    if y_flip:
        mask = mask[:, ::-1, :]
    if x_flip:
        mask = mask[:, :, ::-1]
    return mask.copy() if copy else mask
