"""Train Mask R-CNN FPN (ResNet-50/101) on a COCO-format json of your own.

    python scripts/train_mask_rcnn.py --dataset export/annotations/instances_train.json \\
        --val export/annotations/instances_valid.json --model mask_rcnn_fpn_resnet50 \\
        --pretrained-model imagenet --iteration 20000 --batchsize 2 --device cuda:0

``cvzoo train MODEL --data PATH`` for Mask R-CNN (cvzoo/cli/train.py, docs/training.md),
with this script's former defaults (mask_rcnn_fpn_resnet50 from the ImageNet backbone,
20,000 iterations of 2 images) and ``--images``: the folder of the json's images when it
is not found beside the json (a CVAT export). The classes are the json's categories;
masks may be polygons or RLE. Writes ``log``, ``loss.png``, snapshots and
``model_final.npz`` to --out and prints the held-out mask mAP at IoU 0.5 (VOC metric),
last as a JSON line.
"""

from cvzoo.cli import entry, train, train_options

MODELS = ('mask_rcnn_fpn_resnet50', 'mask_rcnn_fpn_resnet101', 'maskrcnn_resnet50_fpn',
          'maskrcnn_resnet50_fpn_v2')


def main(argv=None):
    """Train; return the held-out mask mAP@0.5 (None without --val, or off rank 0)."""
    args = _parser().parse_args(argv)
    data = None if args.images is None else _with_images(args)
    return train.print_outcome(train.run(args, data=data), 'mask_map@0.5')


def _with_images(args):
    """The jsons of --dataset and --val with their images in --images."""
    from cvzoo.datasets import formats, registry

    train_set = registry.load_instance_segmentation_dataset(args.data, data_dir=args.images)
    val = None if args.val is None else registry.load_instance_segmentation_dataset(
        args.val, label_names=train_set.label_names, data_dir=args.images).dataset
    return formats.TrainingData(train_set.dataset, val, tuple(train_set.label_names),
                                'instance_segmentation', 'coco_instances')


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=MODELS, default='mask_rcnn_fpn_resnet50')
    parser.add_argument('--images', default=None,
                        help='the folder of the json images (default: beside the json)')
    train.add_arguments(parser, data_flags=('--dataset', '--data'), pretrained='imagenet',
                        batchsize=2, iterations=20000)
    return parser


if __name__ == '__main__':
    train_options.run(main)
