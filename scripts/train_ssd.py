"""Train an SSD on VOC07+12 or on a folder of one's own images (VOC, COCO or YOLO layout).

    python scripts/train_ssd.py --dataset voc07+12 --model ssd300 --pretrained-model imagenet
    python scripts/train_ssd.py --dataset shapes/ --model ssd_tiny --insize 64 \\
        --iteration 1500 --batchsize 16 --out result

``cvzoo train MODEL --data PATH`` for an SSD (cvzoo/cli/train.py, docs/training.md),
with this script's former defaults (ssd300, 120,000 iterations of 32 images; ssd_tiny
at 96 px). Writes ``log``, ``loss.png``, ``metric.png``, snapshots and
``model_final.npz`` to --out and prints the held-out VOC mAP, last as a JSON line.
"""

from cvzoo.cli import argument_types, entry, train, train_options

MODELS = ('ssd300', 'ssd512', 'ssd_tiny', 'ssd300_vgg16')
TINY_INSIZE = 96


def main(argv=None):
    """Train; return the held-out mAP (None off rank 0)."""
    args = _parser().parse_args(argv)
    if args.model == 'ssd_tiny' and args.insize is None:
        args.insize = TINY_INSIZE
    if args.optimizer == 'sgd':  # this script's 'sgd' was momentum SGD
        args.optimizer = 'momentum_sgd'
    outcome = train.run(args, hyper={'max_expand_ratio': args.max_expand_ratio})
    return train.print_outcome(outcome, 'map')


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=MODELS, default='ssd300')
    parser.add_argument('--max-expand-ratio', type=argument_types.finite_float(1), default=None,
                        help="largest zoom-out of the augmentation (1: none; default: the "
                        "recipe's, 4)")
    train.add_arguments(parser, data_flags=('--dataset', '--data'), data_default='voc07+12',
                        batchsize=32, iterations=120000)
    return parser


if __name__ == '__main__':
    train_options.run(main)
