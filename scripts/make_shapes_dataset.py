"""Write a generated dataset in any format ``cvzoo train --data`` reads (VOC by default).

The data comes from :mod:`cvzoo.testing.synthetic_data`: circles, squares and triangles
with their boxes, masks and keypoints (voc, coco, yolo, coco_instances, coco_keypoints),
coloured regions with label maps (segmentation_folders), or stripes, checks and dots
(class_folders). The first ``--n-train`` images train, the next ``--n-test`` validate
(VOC: ``ImageSets/Main/{train,test}.txt``). A VOC folder trains a detector with
``scripts/train_yolo.py --dataset PATH`` (README.md, "Train a detector on your own
images") or ``scripts/train_ssd.py`` exactly like a folder of one's own photos.

    python scripts/make_shapes_dataset.py --out myshapes --n-train 200 --n-test 50 --size 256
    python scripts/make_shapes_dataset.py --format yolo --out shapes_yolo --n-train 200
    python scripts/make_shapes_dataset.py --layout flat --out shapes_labelimg --n-train 200

``--layout flat`` writes each VOC xml beside its image (in ``train/`` and ``valid/``
with ``--n-test``), as LabelImg and Roboflow export them.
"""

import pathlib
import sys

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import argument_types, entry
from cvzoo.datasets.formats import FORMATS
from cvzoo.testing import synthetic_data


def write_dataset(out, n_train, n_test, size=64, seed=0, format='voc', **options):
    """Write the folder; returns its path."""
    return synthetic_data.make_dataset(format, out, n_train, n_test, size, seed, **options)


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', required=True, type=argument_types.output_folder,
                        help='the folder to write (its parent folder must exist)')
    parser.add_argument('--format', choices=FORMATS, default='voc',
                        help='the layout to write (default: voc)')
    parser.add_argument('--n-train', type=argument_types.positive_int, default=2000)
    parser.add_argument('--n-test', type=argument_types.non_negative_int, default=200,
                        help='images of the validation split (0: none)')
    parser.add_argument('--size', type=argument_types.int_at_least(synthetic_data.MIN_SIZE),
                        default=64, help=f'image side in pixels (at least '
                                         f'{synthetic_data.MIN_SIZE})')
    parser.add_argument('--masks', choices=synthetic_data.COCO_MASKS, default=None,
                        help='coco_instances and coco_keypoints: masks as polygons '
                             '(default), compressed RLE, RLE counts or mixed (polygons, '
                             'circles and covered shapes as RLE counts)')
    parser.add_argument('--layout', choices=synthetic_data.VOC_LAYOUTS, default=None,
                        help="voc: VOC's folders (devkit, the default) or each xml beside "
                             'its image (flat)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    options = {} if args.masks is None else {'masks': args.masks}
    if options and not args.format.startswith('coco_'):
        parser.error(f'argument --masks: only for coco_instances and coco_keypoints, not '
                     f'--format {args.format}')
    if args.layout is not None:
        if args.format != 'voc':
            parser.error(f'argument --layout: only for --format voc, not --format '
                         f'{args.format}')
        options['layout'] = args.layout
    write_dataset(args.out, args.n_train, args.n_test, args.size, args.seed, args.format,
                  **options)


if __name__ == '__main__':
    entry.run(main)
