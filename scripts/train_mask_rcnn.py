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

from cvzoo import errors
from cvzoo.cli import entry, train, train_options

MODELS = ('mask_rcnn_fpn_resnet50', 'mask_rcnn_fpn_resnet101', 'maskrcnn_resnet50_fpn',
          'maskrcnn_resnet50_fpn_v2')


def main(argv=None):
    """Train; return the held-out mask mAP@0.5 (None without --val, or off rank 0)."""
    args = _parser().parse_args(argv)
    data = None if args.images is None else _with_images(args)
    # ChainerCV's recipe freezes the first stages of a backbone that starts trained
    hyper = {'freeze_backbone': args.pretrained_model != 'none'} \
        if args.model.startswith('mask_rcnn_fpn_') else {}
    return train.print_outcome(train.run(args, data=data, hyper=hyper), 'mask_map@0.5')


def _with_images(args):
    """The jsons of --dataset and --val with their images in --images."""
    from cvzoo.datasets import formats

    train_set = _load('--dataset', args.data, args.images)
    val = None if args.val is None else _load('--val', args.val, args.images,
                                              train_set.label_names).dataset
    return formats.TrainingData(train_set.dataset, val, tuple(train_set.label_names),
                                'instance_segmentation', 'coco_instances')


def _load(option, path, images, label_names=None):
    """The json of ``option``; its errors name the option."""
    from cvzoo.datasets import registry

    try:
        return registry.load_instance_segmentation_dataset(path, label_names=label_names,
                                                           data_dir=images)
    except (ValueError, OSError) as error:
        raise errors.UsageError(f'{option}: {error}') from None


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
