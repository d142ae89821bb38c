"""Write a VOC-layout folder of generated images of circles, squares and triangles.

Each image has a plain or noisy background and one to three shapes of random colour
and size; ``Annotations/<id>.xml`` holds their boxes (VOC's 1-based pixel indices),
``ImageSets/Main/{train,test}.txt`` the split (the first ``--n-train`` ids train, the
rest test). The folder trains a detector with ``scripts/train_yolo.py --dataset PATH``
(README.md, "Train a detector on your own images") or ``scripts/train_ssd.py`` exactly
like a folder of one's own photos.

    python scripts/make_shapes_dataset.py --out myshapes --n-train 200 --n-test 50 --size 256
"""

import pathlib
import sys

import numpy
from PIL import Image, ImageDraw

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import argument_types, entry

LABEL_NAMES = ('circle', 'square', 'triangle')
MIN_SIZE = 16  # a shape is 20% to 50% of the side: smaller images give empty boxes
_XML = ('<annotation><filename>{id}.jpg</filename><size><width>{W}</width><height>{H}</height>'
        '<depth>3</depth></size>{objects}</annotation>\n')
_OBJECT = ('<object><name>{name}</name><difficult>0</difficult><bndbox><xmin>{0}</xmin>'
           '<ymin>{1}</ymin><xmax>{2}</xmax><ymax>{3}</ymax></bndbox></object>')


def _draw_shape(draw, name, box, color):
    x0, y0, x1, y1 = box
    if name == 'circle':
        draw.ellipse(box, fill=color)
    elif name == 'square':
        draw.rectangle(box, fill=color)
    else:
        draw.polygon([((x0 + x1) / 2, y0), (x1, y1), (x0, y1)], fill=color)


def make_image(rng, size, max_objects=3):
    """One image (PIL) and its objects as (name, (x0, y0, x1, y1)) with inclusive pixels."""
    background = tuple(int(v) for v in rng.randint(0, 256, 3))
    noise = rng.normal(0, rng.uniform(0, 20), (size, size, 3))
    pixels = numpy.clip(numpy.array(background) + noise, 0, 255).astype(numpy.uint8)
    img = Image.fromarray(pixels)
    draw = ImageDraw.Draw(img)
    objects = []
    for _ in range(rng.randint(1, max_objects + 1)):
        side = int(rng.uniform(0.2, 0.5) * size)
        x0, y0 = (int(v) for v in rng.randint(0, size - side, 2))
        name = LABEL_NAMES[rng.randint(len(LABEL_NAMES))]
        color = tuple(int((b + rng.randint(80, 176)) % 256) for b in background)
        _draw_shape(draw, name, (x0, y0, x0 + side - 1, y0 + side - 1), color)
        objects.append((name, (x0, y0, x0 + side - 1, y0 + side - 1)))
    return img, objects


def write_dataset(out, n_train, n_test, size=64, seed=0):
    """Write the folder; returns its path."""
    out = pathlib.Path(out)
    for sub in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (out / sub).mkdir(parents=True, exist_ok=True)
    rng = numpy.random.RandomState(seed)
    ids = [f'{i:06d}' for i in range(n_train + n_test)]
    for image_id in ids:
        img, objects = make_image(rng, size)
        img.save(out / 'JPEGImages' / f'{image_id}.jpg', quality=95)
        # NOTE: VOC boxes are 1-based inclusive pixel indices
        xml_objects = ''.join(_OBJECT.format(x0 + 1, y0 + 1, x1 + 1, y1 + 1, name=name)
                              for name, (x0, y0, x1, y1) in objects)
        (out / 'Annotations' / f'{image_id}.xml').write_text(
            _XML.format(id=image_id, W=size, H=size, objects=xml_objects))
    (out / 'ImageSets/Main/train.txt').write_text('\n'.join(ids[:n_train]) + '\n')
    (out / 'ImageSets/Main/test.txt').write_text('\n'.join(ids[n_train:]) + '\n')
    return out


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', required=True, type=argument_types.output_folder,
                        help='the folder to write (its parent folder must exist)')
    parser.add_argument('--n-train', type=argument_types.positive_int, default=2000)
    parser.add_argument('--n-test', type=argument_types.non_negative_int, default=200)
    parser.add_argument('--size', type=argument_types.int_at_least(MIN_SIZE), default=64,
                        help=f'image side in pixels (at least {MIN_SIZE})')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    write_dataset(args.out, args.n_train, args.n_test, args.size, args.seed)


if __name__ == '__main__':
    entry.run(main)
