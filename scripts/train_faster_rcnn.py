"""Train Faster R-CNN (VGG16, or FPN on ResNet-50/101) on VOC07 or a folder of one's own.

    python scripts/train_faster_rcnn.py --dataset voc07 --model faster_rcnn_vgg16 \\
        --pretrained-model imagenet
    python scripts/train_faster_rcnn.py --dataset shapes/ --model faster_rcnn_vgg16 \\
        --min-size 128 --max-size 192 --iteration 200 --out result

``cvzoo train MODEL --data PATH`` for these detectors (cvzoo/cli/train.py,
docs/training.md), with this script's former defaults (faster_rcnn_vgg16, 70,000
iterations). Writes ``log``, ``loss.png``, snapshots and ``model_final.npz`` to --out
and prints the held-out VOC mAP, last as a JSON line.
"""

from cvzoo.cli import entry, train, train_options

MODELS = ('faster_rcnn_vgg16', 'faster_rcnn_fpn_resnet50', 'faster_rcnn_fpn_resnet101',
          'fasterrcnn_resnet50_fpn', 'fasterrcnn_resnet50_fpn_v2')


def main(argv=None):
    """Train; return the held-out mAP (None off rank 0)."""
    args = _parser().parse_args(argv)
    return train.print_outcome(train.run(args), 'map')


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=MODELS, default='faster_rcnn_vgg16')
    train.add_arguments(parser, data_flags=('--dataset', '--data'), data_default='voc07',
                        iterations=70000)
    return parser


if __name__ == '__main__':
    train_options.run(main)
