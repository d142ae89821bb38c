"""Write a COCO-format instance segmentation folder of generated shapes, as an annotation
tool exports it.

Each image has a noisy plain background and one to three circles, squares and triangles
of random colour and size (they may overlap; a later shape hides the ones below, and
their masks say so). Squares and triangles are written as polygons, circles as
uncompressed RLE (``iscrowd`` 0), so that both mask encodings are read. The layout is
Roboflow's and CVAT's: ``<out>/annotations/instances_<split>.json`` and
``<out>/<split>/<file>.png``.
"""

import json
import pathlib

import numpy
from PIL import Image, ImageDraw

from cvzoo.datasets.coco.coco_mask_encoding import mask_to_rle

LABEL_NAMES = ('circle', 'square', 'triangle')
# NOTE: category ids that are neither 0-based nor in the names' order, as exports have
CATEGORY_IDS = {'circle': 3, 'square': 1, 'triangle': 2}


def _outline(name, x0, y0, side):
    """The polygon (x, y) vertices of a square or triangle, or the circle's box."""
    x1, y1 = x0 + side, y0 + side
    if name == 'square':
        return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    if name == 'triangle':
        return [((x0 + x1) / 2, y0), (x1, y1), (x0, y1)]
    return [(x0, y0), (x1 - 1, y1 - 1)]


def _shape_mask(name, outline, size):
    canvas = Image.new('L', (size, size), 0)
    draw = ImageDraw.Draw(canvas)
    if name == 'circle':
        draw.ellipse(outline, fill=1)
    else:
        draw.polygon(outline, fill=1)
    return numpy.asarray(canvas, bool)


def uncompressed_rle(mask):
    """COCO's uncompressed RLE of a (H, W) bool mask: column-major runs, zeros first."""
    return mask_to_rle(mask, compressed=False)


def make_image(rng, size, max_objects=3, overlap=True):
    """One (size, size, 3) uint8 image and its objects as (name, mask, outline), the
    masks without the parts later shapes hide; without ``overlap``, a shape whose box
    would touch an earlier one's is not drawn."""
    background = rng.randint(0, 256, 3)
    noise = rng.normal(0, rng.uniform(0, 15), (size, size, 3))
    pixels = numpy.clip(background + noise, 0, 255)
    objects, taken = [], numpy.zeros((size, size), bool)
    for _ in range(rng.randint(1, max_objects + 1)):
        side = int(rng.uniform(0.25, 0.55) * size)
        x0, y0 = (int(v) for v in rng.randint(0, size - side, 2))
        if not overlap and taken[y0:y0 + side, x0:x0 + side].any():
            continue
        taken[y0:y0 + side, x0:x0 + side] = True
        name = LABEL_NAMES[rng.randint(len(LABEL_NAMES))]
        outline = _outline(name, x0, y0, side)
        mask = _shape_mask(name, outline, size)
        pixels[mask] = (background + rng.randint(80, 176, 3)) % 256
        objects = [(n, m & ~mask, o) for n, m, o in objects]
        objects.append((name, mask, outline))
    return pixels.astype(numpy.uint8), [obj for obj in objects if obj[1].sum() >= 4]


def _annotation(ann_id, image_id, name, mask, outline, covered):
    """The json record of one object: a polygon unless it is a circle or partly hidden."""
    ys, xs = numpy.nonzero(mask)
    bbox = [int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1),
            int(ys.max() - ys.min() + 1)]
    if name == 'circle' or covered:
        segmentation = uncompressed_rle(mask)
    else:
        segmentation = [[float(v) for point in outline for v in point]]
    return {'id': ann_id, 'image_id': image_id, 'category_id': CATEGORY_IDS[name],
            'segmentation': segmentation, 'bbox': bbox, 'area': int(mask.sum()),
            'iscrowd': 0}


def write_coco_shapes(out, split, n_image, size=128, seed=0, n_unannotated=0,
                      overlap=True):
    """Write ``out/annotations/instances_<split>.json`` and ``out/<split>/*.png``.

    ``n_unannotated`` more images follow the shapes, as exports keep them: the first
    holds only a crowd region (``iscrowd`` 1), the others no annotation. ``overlap``:
    see :func:`make_image`.

    Returns:
        pathlib.Path: the json.
    """
    out = pathlib.Path(out)
    (out / 'annotations').mkdir(parents=True, exist_ok=True)
    (out / split).mkdir(parents=True, exist_ok=True)
    rng = numpy.random.RandomState(seed)
    images, annotations = [], []
    for image_id in range(1, n_image + 1):
        pixels, objects = make_image(rng, size, overlap=overlap)
        file_name = f'{image_id:05d}.png'
        Image.fromarray(pixels).save(out / split / file_name)
        images.append({'id': image_id, 'file_name': file_name, 'height': size,
                       'width': size})
        for name, mask, outline in objects:
            covered = mask.sum() < _shape_mask(name, outline, size).sum()
            annotations.append(_annotation(len(annotations) + 1, image_id, name, mask,
                                           outline, covered))
    for image_id in range(n_image + 1, n_image + n_unannotated + 1):
        file_name = f'{image_id:05d}.png'
        Image.fromarray(make_image(rng, size)[0]).save(out / split / file_name)
        images.append({'id': image_id, 'file_name': file_name, 'height': size,
                       'width': size})
    if n_unannotated:
        crowd = numpy.zeros((size, size), bool)
        crowd[:size // 2, :size // 2] = True
        annotations.append({'id': len(annotations) + 1, 'image_id': n_image + 1,
                            'category_id': 1, 'segmentation': uncompressed_rle(crowd),
                            'bbox': [0, 0, size // 2, size // 2], 'area': int(crowd.sum()),
                            'iscrowd': 1})
    categories = [{'id': i, 'name': name, 'supercategory': 'shape'}
                  for name, i in sorted(CATEGORY_IDS.items(), key=lambda item: item[1])]
    json_path = out / 'annotations' / f'instances_{split}.json'
    json_path.write_text(json.dumps({'images': images, 'annotations': annotations,
                                     'categories': categories}))
    return json_path
