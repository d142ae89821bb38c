"""Compare the size an annotation file gives an image with the image as read."""

from cvzoo import errors


def check_image_size(where, declared, img, image_path):
    """Refuse an image whose (H, W) differs from the size its annotation file declares.

    Boxes and masks are drawn on the image the annotator saw; when the file disagrees
    with the pixels (most often a photo that its EXIF Orientation tag turns, which
    :func:`cvzoo.utils.image.read_image` applies), clipping the boxes to the image would
    silently move them.

    Args:
        where (str): the annotation file and entry, e.g. ``'x.xml: <size>'``.
        declared (tuple or None): (H, W) from the annotation file; None skips the check.
        img: the (C, H, W) image as read.
        image_path: the image file, named in the message.

    Raises:
        cvzoo.errors.AnnotationError: naming both sizes as width x height.
    """
    read = tuple(img.shape[1:])
    if declared is None or tuple(declared) == read:
        return
    turned = ' (turned by its EXIF Orientation tag?)' if tuple(declared) == read[::-1] else ''
    raise errors.AnnotationError(
        f'{where}: gives the image as {declared[1]}x{declared[0]}, but {image_path} reads '
        f'as {read[1]}x{read[0]}{turned}; its boxes would not fall where they were drawn')
