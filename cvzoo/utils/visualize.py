"""Draw detections and segmentations onto images with Pillow (no matplotlib).

Every function takes a CHW image as DESIGN.md defines it, returns an (H, W', 3) uint8
array and, when ``out`` is given, also writes it as a PNG (atomically).
"""

import numpy
from PIL import Image, ImageDraw, ImageFont

from cvzoo.core import backend
from cvzoo.utils.bbox import mask_to_bbox
from cvzoo.utils.image import write_image

_LEGEND_ROW = 14  # pixels per legend line


def voc_colormap(n):
    """Return PASCAL VOC's colour palette for ids 0..n-1 (id 0 is black).

    Args:
        n (int): the number of colours.

    Returns:
        numpy.ndarray: (n, 3) uint8 RGB.

    >>> voc_colormap(3).tolist()
    [[0, 0, 0], [128, 0, 0], [0, 128, 0]]
    """
    ids = numpy.arange(n)
    colormap = numpy.zeros((n, 3), numpy.int64)
    for shift in range(7, -1, -1):
        # NOTE: the VOC palette spreads the bits of the id over the three channels,
        # highest colour bit first.
        for channel in range(3):
            colormap[:, channel] |= ((ids >> (3 * (7 - shift) + channel)) & 1) << shift
    return colormap.astype(numpy.uint8)


def _to_pil(img):
    img = backend.to_numpy(img)
    if img.ndim != 3 or img.shape[0] not in (1, 3):
        raise ValueError(f'img: expected a (3, H, W) array, got shape {img.shape}')
    hwc = numpy.clip(numpy.rint(img), 0, 255).astype(numpy.uint8).transpose(1, 2, 0)
    if hwc.shape[2] == 1:
        hwc = numpy.repeat(hwc, 3, axis=2)
    return Image.fromarray(numpy.ascontiguousarray(hwc), 'RGB')


def _finish(pil_img, out):
    array = numpy.asarray(pil_img.convert('RGB')).copy()
    if out is not None:
        write_image(array.transpose(2, 0, 1), out)
    return array


def _caption(label, score, label_names, index):
    parts = []
    if label is not None:
        value = int(label[index])
        parts.append(label_names[value] if label_names is not None else str(value))
    if score is not None:
        parts.append(f'{float(score[index]):.2f}')
    return ': '.join(parts)


def _draw_boxes(draw, bbox, colors, captions):
    font = ImageFont.load_default()
    for (x_min, y_min, x_max, y_max), color, caption in zip(bbox.tolist(), colors, captions):
        draw.rectangle((x_min, y_min, x_max - 1, y_max - 1), outline=tuple(color), width=2)
        if caption:
            left, top, right, bottom = draw.textbbox((x_min, y_min), caption, font=font)
            draw.rectangle((left, top, right + 2, bottom + 1), fill=tuple(color))
            draw.text((x_min + 1, y_min), caption, fill=(255, 255, 255), font=font)


def vis_bbox(img, bbox, label=None, score=None, label_names=None, out=None):
    """Draw box outlines, with the label name and score above each box.

    Args:
        img (array): (3, H, W) RGB in [0, 255].
        bbox (array): (R, 4), (x_min, y_min, x_max, y_max).
        label (array or None): (R,) int class ids (they pick the colours).
        score (array or None): (R,) scores.
        label_names (sequence of str or None): names of the class ids.
        out (str or Path or None): also write the result to this PNG.

    Returns:
        numpy.ndarray: (H, W, 3) uint8.
    """
    bbox = numpy.asarray(backend.to_numpy(bbox)).reshape(-1, 4)
    label = None if label is None else backend.to_numpy(label)
    score = None if score is None else backend.to_numpy(score)
    for name, array in (('label', label), ('score', score)):
        if array is not None and len(array) != len(bbox):
            raise ValueError(f'{name}: expected {len(bbox)} entries like bbox, got {len(array)}')
    pil_img = _to_pil(img)
    palette = voc_colormap(256)[1:]
    color_ids = label if label is not None else numpy.zeros(len(bbox), int)
    colors = [palette[int(i) % len(palette)] for i in color_ids]
    captions = [_caption(label, score, label_names, i) for i in range(len(bbox))]
    _draw_boxes(ImageDraw.Draw(pil_img), bbox, colors, captions)
    return _finish(pil_img, out)


def _add_legend(pil_img, entries):
    """Widen the image with a legend of (name, colour) entries on the right."""
    if not entries:
        return pil_img
    font = ImageFont.load_default()
    width = max(int(ImageDraw.Draw(pil_img).textlength(name, font=font)) for name, _ in entries)
    height = max(pil_img.height, _LEGEND_ROW * len(entries) + 4)
    canvas = Image.new('RGB', (pil_img.width + width + 24, height), (255, 255, 255))
    canvas.paste(pil_img, (0, 0))
    draw = ImageDraw.Draw(canvas)
    for row, (name, color) in enumerate(entries):
        top = 2 + row * _LEGEND_ROW
        left = pil_img.width + 4
        draw.rectangle((left, top + 1, left + 10, top + 11), fill=tuple(int(c) for c in color))
        draw.text((left + 14, top), name, fill=(0, 0, 0), font=font)
    return canvas


def vis_semantic_segmentation(img, label, label_names=None, label_colors=None, alpha=0.5,
                              out=None):
    """Blend a label map over an image, with a legend of the classes present.

    Pixels labelled -1 (ignore) are left as they are.

    Args:
        img (array or None): (3, H, W) RGB in [0, 255]; None draws on black.
        label (array): (H, W) int, -1 = ignore.
        label_names (sequence of str or None): class names, for the legend.
        label_colors (array or None): (n_class, 3) RGB; VOC's palette by default (class
            i gets VOC colour i, so class 0, VOC's background, is black).
        alpha (float): opacity of the colours, in [0, 1].
        out (str or Path or None): also write the result to this PNG.

    Returns:
        numpy.ndarray: (H, W + legend width, 3) uint8.
    """
    label = numpy.asarray(backend.to_numpy(label))
    if label.ndim != 2:
        raise ValueError(f'label: expected an (H, W) array, got shape {label.shape}')
    if img is None:
        img = numpy.zeros((3,) + label.shape, numpy.float32)
    n_class = int(label.max()) + 1 if label.size else 0
    if label_colors is None:
        label_colors = voc_colormap(max(n_class, len(label_names or ())))
    label_colors = numpy.asarray(label_colors, numpy.float32)
    base = numpy.asarray(_to_pil(img), numpy.float32)
    valid = label >= 0
    colored = base.copy()
    colored[valid] = label_colors[label[valid]]
    blended = numpy.where(valid[:, :, None], (1 - alpha) * base + alpha * colored, base)
    pil_img = Image.fromarray(numpy.clip(numpy.rint(blended), 0, 255).astype(numpy.uint8))
    present = numpy.unique(label[valid])
    entries = [(label_names[i] if label_names is not None else str(i), label_colors[i])
               for i in present.tolist()]
    return _finish(_add_legend(pil_img, entries), out)


def vis_instance_segmentation(img, mask, label=None, score=None, label_names=None, alpha=0.7,
                              out=None, legend=False):
    """Colour each instance mask, outline its box and write its label and score.

    Instance i gets colour i of VOC's palette (without black). Where masks overlap, the
    pixel takes the colour of the first of them (the best score, as predict() sorts
    them). The blend is one vectorised step over all pixels.

    Args:
        img (array): (3, H, W) RGB in [0, 255].
        mask (array): (R, H, W) bool.
        label (array or None): (R,) int class ids.
        score (array or None): (R,) scores.
        label_names (sequence of str or None): names of the class ids.
        alpha (float): opacity of the mask colours.
        out (str or Path or None): also write the result to this PNG.
        legend (bool): widen the picture with one legend line per instance (its colour,
            label and score).

    Returns:
        numpy.ndarray: (H, W, 3) uint8, or (H', W + legend width, 3) with the legend.

    >>> mask = numpy.zeros((1, 4, 4), bool); mask[0, 1:3, 1:3] = True
    >>> vis_instance_segmentation(numpy.zeros((3, 4, 4)), mask, alpha=1.0)[1, 2].tolist()
    [128, 0, 0]
    """
    mask = numpy.asarray(backend.to_numpy(mask)).astype(bool)
    if mask.ndim != 3:
        raise ValueError(f'mask: expected an (R, H, W) array, got shape {mask.shape}')
    label = None if label is None else backend.to_numpy(label)
    score = None if score is None else backend.to_numpy(score)
    for name, array in (('label', label), ('score', score)):
        if array is not None and len(array) != len(mask):
            raise ValueError(f'{name}: expected {len(mask)} entries like mask, got {len(array)}')
    palette = voc_colormap(256)[1:]
    colors = palette[numpy.arange(len(mask)) % len(palette)]
    base = numpy.asarray(_to_pil(img), numpy.float32)
    covered = mask.any(axis=0)
    first = mask.argmax(axis=0)  # the first instance covering each pixel
    painted = (1 - alpha) * base + alpha * colors.astype(numpy.float32)[first]
    canvas = numpy.where(covered[:, :, None], painted, base)
    pil_img = Image.fromarray(numpy.clip(numpy.rint(canvas), 0, 255).astype(numpy.uint8))
    captions = [_caption(label, score, label_names, i) for i in range(len(mask))]
    _draw_boxes(ImageDraw.Draw(pil_img), mask_to_bbox(mask), colors, captions)
    if legend:
        pil_img = _add_legend(pil_img, [(caption or str(i), color) for i, (caption, color)
                                        in enumerate(zip(captions, colors))])
    return _finish(pil_img, out)


def _check_points(point, visible, skeleton):
    """Check vis_point's arrays; return them as (R, K, 2), (R, K) bool and (S, 2) int."""
    point = numpy.asarray(backend.to_numpy(point), numpy.float64)
    if point.size == 0 and point.ndim < 3:
        point = point.reshape(0, 0, 2)
    if point.ndim != 3 or point.shape[2] != 2:
        raise ValueError(f'point: expected an (R, K, 2) array of (x, y), got shape '
                         f'{point.shape}')
    if visible is None:
        visible = numpy.ones(point.shape[:2], bool)
    visible = numpy.asarray(backend.to_numpy(visible))
    if visible.shape != point.shape[:2]:
        raise ValueError(f'visible: expected shape {point.shape[:2]} like point, got '
                         f'{visible.shape}')
    visible = visible.astype(bool) & numpy.isfinite(point).all(axis=2)
    skeleton = numpy.asarray(() if skeleton is None else skeleton)
    if skeleton.size == 0:
        skeleton = numpy.zeros((0, 2), numpy.int64)
    if skeleton.ndim != 2 or skeleton.shape[1] != 2 or skeleton.dtype.kind not in 'iu':
        raise ValueError(f'skeleton: expected (S, 2) int pairs of point indexes, got shape '
                         f'{skeleton.shape} and dtype {skeleton.dtype}')
    if len(skeleton) and (skeleton.min() < 0 or skeleton.max() >= point.shape[1]):
        raise ValueError(f'skeleton: expected indexes in [0, {point.shape[1]}), got '
                         f'{skeleton.min()}..{skeleton.max()}')
    return point, visible, skeleton


def vis_point(img, point, visible=None, skeleton=None, radius=3, out=None):
    """Draw the keypoints of each instance, and the limbs that join them.

    Instance i gets colour i of VOC's palette (without black), for its points and its
    limbs. A point that is not visible (or not finite) is not drawn, nor is a limb with
    such an end.

    Args:
        img (array): (3, H, W) RGB in [0, 255].
        point (array): (R, K, 2) float, (x, y) in pixels (ChainerCV's were (y, x)).
        visible (array or None): (R, K) bool; None: every point.
        skeleton (sequence of (int, int) or None): limbs as pairs of point indexes in
            [0, K); None draws the points alone. For COCO's 17 person keypoints pass
            ``cvzoo.datasets.coco.coco_keypoint_names.coco_point_skeleton`` (the package
            layers keep utils from importing datasets, so it is not picked by itself).
        radius (int): of the dots, in pixels.
        out (str or Path or None): also write the result to this PNG.

    Returns:
        numpy.ndarray: (H, W, 3) uint8.

    Raises:
        ValueError: ``point``, ``visible`` or ``skeleton`` has the wrong shape, or a
            skeleton index is out of range.

    >>> point = numpy.array([[[1.0, 2.0], [6.0, 5.0]]])
    >>> vis_point(numpy.zeros((3, 8, 8)), point, skeleton=[(0, 1)], radius=0)[2, 1].tolist()
    [128, 0, 0]
    """
    point, visible, skeleton = _check_points(point, visible, skeleton)
    pil_img = _to_pil(img)
    draw = ImageDraw.Draw(pil_img)
    palette = voc_colormap(256)[1:]
    colors = palette[numpy.arange(len(point)) % len(palette)]
    # NOTE: the limbs with two visible ends and the visible points are chosen with one
    # array step each; only the Pillow calls that draw them are made one by one.
    limb_inst, limb = numpy.nonzero(visible[:, skeleton[:, 0]] & visible[:, skeleton[:, 1]])
    ends = point[limb_inst[:, None], skeleton[limb]]  # (L, 2, 2)
    for inst, (start, end) in zip(limb_inst.tolist(), ends.tolist()):
        draw.line((tuple(start), tuple(end)), fill=tuple(colors[inst].tolist()),
                  width=max(1, radius // 2 + 1))
    inst_ids, point_ids = numpy.nonzero(visible)
    for inst, (x, y) in zip(inst_ids.tolist(), point[inst_ids, point_ids].tolist()):
        draw.ellipse((x - radius, y - radius, x + radius, y + radius),
                     fill=tuple(colors[inst].tolist()), outline=(255, 255, 255)
                     if radius >= 2 else None)
    return _finish(pil_img, out)
