"""Learnable toy data for every task, and writers that lay it out in each on-disk format.

The generators are seeded and work in memory (images are (H, W, 3) uint8):

- :func:`shape_scenes`: circles, squares and triangles of random colour and size on a
  plain or noisy background, with their boxes, masks (the visible part) and five
  keypoints each (:data:`POINT_NAMES`): detection, instance segmentation, keypoints;
- :func:`region_scenes`: regions of a colour per class on a grey background, with label
  maps (255 on the 1-pixel band between regions): semantic segmentation;
- :func:`texture_images`: stripes, checks and dots of random period and colours, a class
  per pattern (:data:`TEXTURE_NAMES`): classification.

The writers (:func:`write_class_folders`, :func:`write_voc` (VOC's layout, or the xml
files beside the images), :func:`write_coco`, :func:`write_yolo`,
:func:`write_segmentation_folders`) lay a train split and an optional validation split
out the way annotation tools export them; :func:`make_dataset` generates
and writes in one call. A small model trained a few minutes on 200 such images of 64 px
reaches well above chance on each task.

>>> scene = shape_scenes(1, size=32, seed=0)[0]
>>> scene.img.shape, scene.mask.shape[1:], scene.point.shape[1:]
((32, 32, 3), (32, 32), (5, 2))
"""

import dataclasses
import json
import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets.coco import coco_mask_decoding, coco_mask_encoding

SHAPE_NAMES = ('circle', 'square', 'triangle')
POINT_NAMES = ('top', 'left', 'bottom', 'right', 'centre')
REGION_NAMES = ('background',) + SHAPE_NAMES
TEXTURE_NAMES = ('horizontal_stripes', 'vertical_stripes', 'checks', 'dots')
# NOTE: a shape is 20% to 50% of the side: smaller images give boxes of a few pixels.
MIN_SIZE = 16
IGNORE = 255  # the label-map value of pixels that are not scored
_REGION_COLORS = ((0, 0, 0), (220, 60, 60), (60, 200, 60), (60, 90, 230))
_CIRCLE_VERTICES = 32


@dataclasses.dataclass
class ShapeScene:
    """One generated image of shapes and its R objects.

    Attributes:
        img: (H, W, 3) uint8 RGB.
        label: (R,) int32 index into SHAPE_NAMES.
        bbox: (R, 4) float32 (x_min, y_min, x_max, y_max), continuous pixel coordinates.
        polygons: R (N, 2) float64 outlines (x, y) of the shapes.
        mask: (R, H, W) bool, each outline rasterised as COCO polygons are, less the parts
            that later shapes cover.
        point: (R, 5, 2) float32 (x, y) of POINT_NAMES: the shape's topmost, leftmost,
            bottommost and rightmost points (the middle of an edge lying there) and the
            centre of its box.
    """

    img: numpy.ndarray
    label: numpy.ndarray
    bbox: numpy.ndarray
    polygons: list
    mask: numpy.ndarray
    point: numpy.ndarray


def _check_size(size):
    if not (isinstance(size, (int, numpy.integer)) and size >= MIN_SIZE):
        raise errors.UsageError(f'size: expected a whole number of pixels >= {MIN_SIZE}, '
                                f'got {size!r}')


def _noisy_background(rng, size):
    """The background colour (3 ints) and an (H, W, 3) uint8 image of it with noise."""
    background = tuple(int(v) for v in rng.randint(0, 256, 3))
    noise = rng.normal(0, rng.uniform(0, 20), (size, size, 3))
    return background, numpy.clip(numpy.array(background) + noise, 0, 255).astype(numpy.uint8)


def _draw(draw, name, box, fill):
    """Draw shape ``name`` in the inclusive pixel box (x0, y0, x1, y1) with PIL."""
    x0, y0, x1, y1 = box
    if name == 'circle':
        draw.ellipse(box, fill=fill)
    elif name == 'square':
        draw.rectangle(box, fill=fill)
    else:
        draw.polygon([((x0 + x1) / 2, y0), (x1, y1), (x0, y1)], fill=fill)


def _outline(name, x0, y0, side):
    """(N, 2) outline of a shape whose box is [x0, x0 + side] x [y0, y0 + side]."""
    x1, y1 = x0 + side, y0 + side
    if name == 'square':
        return numpy.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], float)
    if name == 'triangle':
        return numpy.array([(x0 + side / 2, y0), (x1, y1), (x0, y1)], float)
    angle = numpy.linspace(0, 2 * numpy.pi, _CIRCLE_VERTICES, endpoint=False)
    return numpy.stack([x0 + side / 2 * (1 + numpy.cos(angle)),
                        y0 + side / 2 * (1 + numpy.sin(angle))], axis=1)


def _points(name, x0, y0, side):
    """(5, 2) POINT_NAMES of a shape."""
    x1, y1, cx, cy = x0 + side, y0 + side, x0 + side / 2, y0 + side / 2
    low = y1 if name == 'triangle' else cy  # a triangle's left and right are its corners
    return numpy.array([(cx, y0), (x0, low), (cx, y1), (x1, low), (cx, cy)], numpy.float32)


def _place(rng, size, taken, overlap):
    """(side, x0, y0) of a new shape, or None when no free place was found in 20 tries."""
    for _ in range(1 if overlap else 20):
        side = int(rng.uniform(0.2, 0.5) * size)
        x0, y0 = (int(v) for v in rng.randint(0, size - side, 2))
        if overlap or all(x0 >= b[2] + 1 or b[0] >= x0 + side + 1 or y0 >= b[3] + 1
                          or b[1] >= y0 + side + 1 for b in taken):
            return side, x0, y0
    return None


def shape_scene(rng, size, max_objects=3, overlap=True):
    """One :class:`ShapeScene` of 1 to ``max_objects`` shapes.

    Args:
        rng (numpy.random.RandomState): the source of randomness.
        size (int): the image side, at least MIN_SIZE.
        max_objects (int): the most shapes in the image.
        overlap (bool): shapes may cover each other (False: a shape with no free place
            is left out, so that each outline is the shape's mask).
    """
    from PIL import Image, ImageDraw

    _check_size(size)
    background, pixels = _noisy_background(rng, size)
    pil_img = Image.fromarray(pixels)
    draw = ImageDraw.Draw(pil_img)
    labels, boxes, outlines, points = [], [], [], []
    for _ in range(rng.randint(1, max_objects + 1)):
        placed = _place(rng, size, boxes, overlap)
        label = rng.randint(len(SHAPE_NAMES))
        color = tuple(int((b + rng.randint(80, 176)) % 256) for b in background)
        if placed is None:
            continue
        side, x0, y0 = placed
        name = SHAPE_NAMES[label]
        _draw(draw, name, (x0, y0, x0 + side - 1, y0 + side - 1), color)
        labels.append(label)
        boxes.append((x0, y0, x0 + side, y0 + side))
        outlines.append(_outline(name, x0, y0, side))
        points.append(_points(name, x0, y0, side))
    mask = numpy.stack([coco_mask_decoding.polygons_to_mask([xy.ravel().tolist()],
                                                            (size, size)) for xy in outlines])
    for k in range(len(mask) - 2, -1, -1):
        mask[k] &= ~mask[k + 1:].any(axis=0)
    return ShapeScene(numpy.asarray(pil_img), numpy.array(labels, numpy.int32),
                      numpy.array(boxes, numpy.float32), outlines, mask, numpy.stack(points))


def shape_scenes(n, size=64, seed=0, max_objects=3, overlap=True):
    """``n`` :class:`ShapeScene` from one seeded stream (see :func:`shape_scene`)."""
    rng = numpy.random.RandomState(seed)
    return [shape_scene(rng, size, max_objects, overlap) for _ in range(n)]


def region_scene(rng, size, max_regions=4):
    """An image of coloured regions and its label map.

    Each region is a circle, square or triangle of 25% to 60% of the side, filled with
    its class's colour (:data:`REGION_NAMES`, red, green and blue) varied by up to 40 per
    channel; later regions cover earlier ones. The background is a grey.

    Returns:
        tuple: img (H, W, 3) uint8 and label (H, W) uint8 (0 background, the class of
        each region, 255 on pixels next to a pixel of another class).
    """
    from PIL import Image, ImageDraw

    _check_size(size)
    grey = int(rng.randint(60, 200))
    pil_img = Image.new('RGB', (size, size), (grey, grey, grey))
    pil_label = Image.new('L', (size, size), 0)
    for _ in range(rng.randint(1, max_regions + 1)):
        label = 1 + rng.randint(len(SHAPE_NAMES))
        side = int(rng.uniform(0.25, 0.6) * size)
        x0, y0 = (int(v) for v in rng.randint(0, size - side, 2))
        box = (x0, y0, x0 + side - 1, y0 + side - 1)
        color = numpy.clip(numpy.array(_REGION_COLORS[label]) + rng.randint(-40, 41, 3), 0, 255)
        _draw(ImageDraw.Draw(pil_img), SHAPE_NAMES[label - 1], box, tuple(map(int, color)))
        _draw(ImageDraw.Draw(pil_label), SHAPE_NAMES[label - 1], box, label)
    noise = rng.normal(0, rng.uniform(0, 15), (size, size, 3))
    img = numpy.clip(numpy.asarray(pil_img) + noise, 0, 255).astype(numpy.uint8)
    label = numpy.asarray(pil_label).copy()
    border = numpy.zeros(label.shape, bool)
    across = label[:, 1:] != label[:, :-1]
    down = label[1:] != label[:-1]
    border[:, 1:] |= across
    border[:, :-1] |= across
    border[1:] |= down
    border[:-1] |= down
    label[border] = IGNORE
    return img, label


def region_scenes(n, size=64, seed=0, max_regions=4):
    """``n`` (img, label) pairs of :func:`region_scene` from one seeded stream."""
    rng = numpy.random.RandomState(seed)
    return [region_scene(rng, size, max_regions) for _ in range(n)]


def texture_image(rng, size, label):
    """An (H, W, 3) uint8 texture of class ``label`` (an index into TEXTURE_NAMES).

    The pattern's period (4 to 12 pixels), phase, two colours and noise are random; the
    class is the pattern alone.
    """
    _check_size(size)
    period = rng.uniform(4, 12)
    y, x = numpy.mgrid[:size, :size] + rng.uniform(0, period, (2, 1, 1))
    rows, columns = (y / period) % 1 < 0.5, (x / period) % 1 < 0.5
    name = TEXTURE_NAMES[label]
    if name == 'horizontal_stripes':
        pattern = rows
    elif name == 'vertical_stripes':
        pattern = columns
    elif name == 'checks':
        pattern = rows ^ columns
    else:
        pattern = ((y % period - period / 2) ** 2 + (x % period - period / 2) ** 2
                   < (0.3 * period) ** 2)
    first = rng.randint(0, 256, 3)
    second = (first + rng.randint(80, 176, 3)) % 256
    img = numpy.where(pattern[:, :, None], first, second)
    img = img + rng.normal(0, rng.uniform(0, 20), img.shape)
    return numpy.clip(img, 0, 255).astype(numpy.uint8)


def texture_images(n, size=64, seed=0):
    """``n`` (img, label) pairs of :func:`texture_image`, the classes taking turns."""
    rng = numpy.random.RandomState(seed)
    return [(texture_image(rng, size, k % len(TEXTURE_NAMES)), k % len(TEXTURE_NAMES))
            for k in range(n)]


def _save(img, path, quality=95):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(numpy.asarray(img)).save(path, quality=quality)


def _splits(train, val):
    return (('train', train),) + ((('val', val),) if val is not None else ())


def write_class_folders(out, train, val=None, label_names=TEXTURE_NAMES):
    """Write ``(img, label)`` pairs as a folder per class of PNGs.

    Without ``val``: ``out/<class name>/<n>.png``; with it, ``out/train/<class name>/``
    and ``out/val/<class name>/`` (the layout of ImageNet and of Ultralytics'
    classification data). Returns ``out`` as a Path.
    """
    out = pathlib.Path(out)
    for split, examples in _splits(train, val):
        root = out / split if val is not None else out
        for name in label_names:
            (root / name).mkdir(parents=True, exist_ok=True)
        for k, (img, label) in enumerate(examples):
            _save(img, root / label_names[label] / f'{k:06d}.png')
    return out


_VOC_XML = ('<annotation><filename>{id}.jpg</filename><size><width>{W}</width>'
            '<height>{H}</height><depth>3</depth></size>{objects}</annotation>\n')
_VOC_OBJECT = ('<object><name>{name}</name><difficult>0</difficult><bndbox><xmin>{0}</xmin>'
               '<ymin>{1}</ymin><xmax>{2}</xmax><ymax>{3}</ymax></bndbox></object>')


VOC_LAYOUTS = ('devkit', 'flat')


def _voc_xml(scene, image_id, label_names):
    """The VOC annotation of a :class:`ShapeScene` whose image is ``<image_id>.jpg``."""
    # NOTE: pixel k covers [k, k + 1): the continuous box [x0, x1) is the 1-based
    # pixels x0 + 1 .. x1
    objects = ''.join(_VOC_OBJECT.format(int(x0) + 1, int(y0) + 1, int(x1), int(y1),
                                         name=label_names[label])
                      for label, (x0, y0, x1, y1) in zip(scene.label, scene.bbox))
    H, W = scene.img.shape[:2]
    return _VOC_XML.format(id=image_id, W=W, H=H, objects=objects)


def write_voc(out, train, val=None, label_names=SHAPE_NAMES, layout='devkit'):
    """Write :class:`ShapeScene` as VOC data: ``<id>.jpg`` images (quality 95) and
    ``<id>.xml`` annotations (VOC's 1-based inclusive pixel indices).

    Args:
        layout (str): 'devkit': VOC's own folder, ``JPEGImages/``, ``Annotations/`` and
            ``ImageSets/Main/train.txt`` and ``test.txt`` (the validation split; empty
            without ``val``), the layout ``scripts/train_*.py --dataset PATH`` read.
            'flat': each xml beside its image, in ``out`` (LabelImg's export) or, with
            ``val``, in ``out/train/`` and ``out/valid/`` (Roboflow's "Pascal VOC").

    Returns ``out`` as a Path.
    """
    if layout not in VOC_LAYOUTS:
        raise errors.UsageError(f'layout: expected one of {VOC_LAYOUTS}, got {layout!r}')
    out = pathlib.Path(out)
    if layout == 'flat':
        for split, scenes in _splits(train, val):
            folder = out / {'train': 'train', 'val': 'valid'}[split] if val else out
            for index, scene in enumerate(scenes):
                _save(scene.img, folder / f'{index:06d}.jpg')
                (folder / f'{index:06d}.xml').write_text(
                    _voc_xml(scene, f'{index:06d}', label_names))
        return out
    for sub in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (out / sub).mkdir(parents=True, exist_ok=True)
    scenes = list(train) + list(val or [])
    ids = [f'{k:06d}' for k in range(len(scenes))]
    for image_id, scene in zip(ids, scenes):
        _save(scene.img, out / 'JPEGImages' / f'{image_id}.jpg')
        (out / 'Annotations' / f'{image_id}.xml').write_text(
            _voc_xml(scene, image_id, label_names))
    n_train = len(train)
    (out / 'ImageSets/Main/train.txt').write_text('\n'.join(ids[:n_train]) + '\n')
    (out / 'ImageSets/Main/test.txt').write_text('\n'.join(ids[n_train:]) + '\n')
    return out


def _is_covered(scene, k):
    """True when later shapes hide part of shape k."""
    whole = coco_mask_decoding.polygons_to_mask([scene.polygons[k].ravel().tolist()],
                                                scene.mask.shape[1:])
    return bool((whole & ~scene.mask[k]).any())


def _segmentation(scene, k, masks):
    if masks == 'mixed':
        masks = ('rle_counts' if SHAPE_NAMES[scene.label[k]] == 'circle'
                 or _is_covered(scene, k) else 'polygon')
    if masks == 'polygon':
        return [scene.polygons[k].ravel().round(2).tolist()]
    return coco_mask_encoding.mask_to_rle(scene.mask[k], compressed=masks == 'rle')


def _coco_annotation(scene, k, kind, masks, next_id, image_id, category_ids):
    x0, y0, x1, y1 = (float(v) for v in scene.bbox[k])
    entry = {'id': next_id, 'image_id': image_id, 'bbox': [x0, y0, x1 - x0, y1 - y0],
             'iscrowd': 0, 'category_id': category_ids[int(scene.label[k])],
             'area': float(scene.mask[k].sum()) if kind != 'detection' else (x1 - x0) * (y1 - y0),
             'segmentation': [] if kind == 'detection' else _segmentation(scene, k, masks)}
    if kind == 'keypoints':
        triples = numpy.concatenate([scene.point[k], numpy.full((len(POINT_NAMES), 1), 2)], 1)
        entry['keypoints'] = triples.ravel().tolist()
        entry['num_keypoints'] = len(POINT_NAMES)
    return entry


def _crowd_annotation(next_id, image_id, size, kind, category_id):
    """A crowd region (iscrowd 1) over the top-left quarter of a ``size`` x ``size`` image:
    RLE runs as COCO writes crowds (no segmentation in a box-only json, no visible
    keypoint in a keypoints json)."""
    half = size // 2
    mask = numpy.zeros((size, size), bool)
    mask[:half, :half] = True
    entry = {'id': next_id, 'image_id': image_id, 'bbox': [0, 0, half, half], 'iscrowd': 1,
             'category_id': category_id, 'area': half * half,
             'segmentation': ([] if kind == 'detection'
                              else coco_mask_encoding.mask_to_rle(mask, compressed=False))}
    if kind == 'keypoints':
        entry['keypoints'], entry['num_keypoints'] = [0] * (3 * len(POINT_NAMES)), 0
    return entry


COCO_KINDS = ('detection', 'instances', 'keypoints')
COCO_MASKS = ('polygon', 'rle', 'rle_counts', 'mixed')


def _coco_json(scenes, split, kind, masks, label_names, category_ids, n_unannotated, size):
    images, annotations = [], []
    for index, scene in enumerate(scenes):
        H, W = scene.img.shape[:2]
        images.append({'id': index + 1, 'file_name': f'{index:06d}.png', 'width': W,
                       'height': H})
        for k in range(len(scene.label)):
            if kind != 'detection' and not scene.mask[k].any():
                continue  # wholly covered by later shapes: nothing to segment
            annotations.append(_coco_annotation(scene, k, kind, masks,
                                                len(annotations) + 1, index + 1,
                                                category_ids))
    for index in range(len(scenes), len(scenes) + n_unannotated):
        images.append({'id': index + 1, 'file_name': f'{index:06d}.png', 'width': size,
                       'height': size})
    if n_unannotated:
        annotations.append(_crowd_annotation(len(annotations) + 1, len(scenes) + 1, size,
                                             kind, category_ids[0]))
    if kind == 'keypoints':
        categories = [{'id': 1, 'name': 'shape', 'supercategory': 'shape',
                       'keypoints': list(POINT_NAMES),
                       'skeleton': [[1, 2], [2, 3], [3, 4], [4, 1]]}]
    else:
        categories = [{'id': category_ids[k], 'name': name, 'supercategory': 'shape'}
                      for k, name in enumerate(label_names)]
    return {'info': {'description': f'cvzoo synthetic shapes, {split}'}, 'images': images,
            'annotations': annotations, 'categories': categories}


def _category_ids(category_ids, kind, label_names):
    """The json id of each class: ``category_ids`` checked, or 1, 2, ..."""
    if category_ids is None:
        if kind == 'keypoints':
            return (1,) * len(SHAPE_NAMES)  # every shape in the one category
        return tuple(range(1, len(label_names) + 1))
    ids = tuple(category_ids)
    if kind == 'keypoints' or len(ids) != len(label_names) or len(set(ids)) != len(ids) \
            or not all(isinstance(i, int) for i in ids):
        raise errors.UsageError(f'category_ids: expected {len(label_names)} different ints '
                                f'(one per label name; not for keypoints), got '
                                f'{category_ids!r}')
    return ids


def write_coco(out, train, val=None, kind='detection', masks='polygon',
               label_names=SHAPE_NAMES, category_ids=None, unannotated=0):
    """Write :class:`ShapeScene` in COCO's layout.

    ``out/annotations/<prefix>_train.json`` with the images in ``out/train/`` (PNG),
    and the same for ``val``; the prefix is 'person_keypoints' for keypoints, else
    'instances'.

    Args:
        kind (str): 'detection' (boxes; 'segmentation' empty as box-only exports have
            it), 'instances' (boxes and masks) or 'keypoints' (boxes, masks and the five
            POINT_NAMES of each shape, every shape in one category 'shape').
        masks (str): how masks are written: 'polygon' (the shapes' outlines), 'rle'
            (compressed RLE strings of the masks), 'rle_counts' (uncompressed runs) or
            'mixed' (polygons, but circles and shapes others cover as uncompressed runs
            of what shows: CVAT's brush masks beside its polygons).
        category_ids (sequence of int or None): the json's id of each of ``label_names``,
            as exports number them (neither from 0 nor in the names' order, often);
            None: 1, 2, ... Labels read back follow the ids' order.
        unannotated (int): images with no object annotated that follow each split's
            scenes, as exports keep them: the first holds a crowd region (iscrowd 1)
            alone, the others nothing.

    Returns ``out`` as a Path. Objects wholly covered by others are left out of the
    instances and keypoints jsons.
    """
    if kind not in COCO_KINDS:
        raise errors.UsageError(f'kind: expected one of {COCO_KINDS}, got {kind!r}')
    if masks not in COCO_MASKS:
        raise errors.UsageError(f'masks: expected one of {COCO_MASKS}, got {masks!r}')
    if not (isinstance(unannotated, int) and unannotated >= 0):
        raise errors.UsageError(f'unannotated: expected an int >= 0, got {unannotated!r}')
    category_ids = _category_ids(category_ids, kind, label_names)
    out = pathlib.Path(out)
    prefix = 'person_keypoints' if kind == 'keypoints' else 'instances'
    (out / 'annotations').mkdir(parents=True, exist_ok=True)
    for split, scenes in _splits(train, val):
        size = scenes[0].img.shape[0] if scenes else MIN_SIZE
        rng = numpy.random.RandomState(len(scenes))
        imgs = [scene.img for scene in scenes] + [_noisy_background(rng, size)[1]
                                                  for _ in range(unannotated)]
        for index, img in enumerate(imgs):
            _save(img, out / split / f'{index:06d}.png')
        data = _coco_json(scenes, split, kind, masks, label_names, category_ids,
                          unannotated, size)
        (out / 'annotations' / f'{prefix}_{split}.json').write_text(json.dumps(data))
    return out


def _yolo_lines(scene):
    H, W = scene.img.shape[:2]
    lines = []
    for label, (x0, y0, x1, y1) in zip(scene.label, scene.bbox):
        lines.append(f'{label} {(x0 + x1) / 2 / W:.6f} {(y0 + y1) / 2 / H:.6f} '
                     f'{(x1 - x0) / W:.6f} {(y1 - y0) / H:.6f}')
    return ''.join(line + '\n' for line in lines)


def write_yolo(out, train, val=None, label_names=SHAPE_NAMES, names_as='dict'):
    """Write :class:`ShapeScene` in the YOLO text layout of Ultralytics' exports.

    ``images/{train,val}/<id>.png``, ``labels/{train,val}/<id>.txt`` (a line
    ``class cx cy w h`` per box, normalised to [0, 1]) and ``data.yaml`` with ``path``
    (the folder, absolute), ``train``, ``val`` (absent without ``val``) and ``names``
    (``names_as`` 'dict': ``{0: name, ...}``, or 'list'). Returns ``out`` as a Path.
    """
    out = pathlib.Path(out)
    for split, scenes in _splits(train, val):
        (out / 'labels' / split).mkdir(parents=True, exist_ok=True)
        for index, scene in enumerate(scenes):
            _save(scene.img, out / 'images' / split / f'{index:06d}.png')
            (out / 'labels' / split / f'{index:06d}.txt').write_text(_yolo_lines(scene))
    names = (list(label_names) if names_as == 'list'
             else {k: name for k, name in enumerate(label_names)})
    config = {'path': str(out.resolve()), 'train': 'images/train', 'names': names}
    if val is not None:
        config['val'] = 'images/val'
    import yaml

    (out / 'data.yaml').write_text(yaml.safe_dump(config, sort_keys=False))
    return out


def write_segmentation_folders(out, train, val=None, label_names=REGION_NAMES):
    """Write ``(img, label)`` pairs as ``images/<id>.png``, ``labels/<id>.png`` (class ids,
    255 ignored) and ``classes.txt`` (a name per line); with ``val``, in ``images/train/``,
    ``images/val/``, ``labels/train/`` and ``labels/val/``. Returns ``out`` as a Path."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / 'classes.txt').write_text(''.join(name + '\n' for name in label_names))
    for split, examples in _splits(train, val):
        sub = split if val is not None else ''
        for index, (img, label) in enumerate(examples):
            _save(img, out / 'images' / sub / f'{index:06d}.png')
            _save(label, out / 'labels' / sub / f'{index:06d}.png')
    return out


# format -> (generator of n examples, writer, the writer's keyword arguments)
_MAKERS = {
    'class_folders': (texture_images, write_class_folders, {}),
    'voc': (shape_scenes, write_voc, {}),
    'coco': (shape_scenes, write_coco, {'kind': 'detection'}),
    'yolo': (shape_scenes, write_yolo, {}),
    'segmentation_folders': (region_scenes, write_segmentation_folders, {}),
    'coco_instances': (shape_scenes, write_coco, {'kind': 'instances'}),
    'coco_keypoints': (shape_scenes, write_coco, {'kind': 'keypoints'}),
}


def examples_for(format, n, size=64, seed=0):
    """The ``n`` in-memory examples :func:`make_dataset` writes in ``format``: ShapeScene
    (shapes may cover each other in the detection formats, not where masks or keypoints
    are written), ``(img, label)`` regions or textures."""
    if format not in _MAKERS:
        raise errors.UsageError(f'format: expected one of {tuple(_MAKERS)}, got {format!r}')
    generate = _MAKERS[format][0]
    if generate is shape_scenes:
        return generate(n, size, seed, overlap=format in ('voc', 'coco', 'yolo'))
    return generate(n, size, seed)


def make_dataset(format, out, n_train, n_val=0, size=64, seed=0, **options):
    """Generate a dataset and write it in ``format``; returns the folder (a Path).

    Args:
        format (str): one of cvzoo.datasets.formats.FORMATS.
        out (str or Path): the folder to write (made if absent).
        n_train, n_val (int): images in the train and validation splits (0: the folder
            has no validation split).
        size (int): the image side in pixels, at least MIN_SIZE.
        seed (int): the same seed writes the same data.
        options: passed to the writer (e.g. ``masks='rle'`` for 'coco_instances').

    The examples are :func:`examples_for` ``(format, n_train + n_val, size, seed)``, the
    first ``n_train`` for training.
    """
    examples = examples_for(format, n_train + n_val, size, seed)
    _, write, kwargs = _MAKERS[format]
    val = examples[n_train:] if n_val else None
    return write(out, examples[:n_train], val, **kwargs, **options)
