"""Train Mask R-CNN FPN (ResNet-50/101) on a COCO-format json of your own.

    python scripts/train_mask_rcnn.py --dataset export/annotations/instances_train.json \\
        --val export/annotations/instances_valid.json --model mask_rcnn_fpn_resnet50 \\
        --pretrained-model imagenet --iteration 20000 --batchsize 2 --device cuda:0

The classes are the json's categories; masks may be polygons or RLE (CVAT, labelme's
COCO export, Roboflow). The images are found in --images, else in the folder named as
the json (without 'instances_') beside or above it, else beside the json. Training as
ChainerCV's examples/fpn (see cvzoo.models.train_mask_rcnn) on the images holding an
instance that is not a crowd region: resized as predict() does, randomly flipped;
MomentumSGD, weight decay 1e-4, lr 0.02 * batchsize / 16 shifted by 0.1 at 2/3 and 8/9
of the run. Writes ``log``, ``loss.png``, snapshots and
``model_final.npz`` (with the class names) to --out and, with --val, prints the mask
mAP at IoU 0.5 (VOC metric, area under the curve) of the validation json.
"""

import json

import numpy

from cvzoo.cli import argument_types, entry, train_options
from cvzoo.datasets.coco.coco_images_with_instances import images_with_instances
from cvzoo.datasets.registry import load_instance_segmentation_dataset
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators.instance_segmentation_evaluators import InstanceSegmentationVOCEvaluator
from cvzoo.models import zoo
from cvzoo.models.train_mask_rcnn import train_mask_rcnn
from cvzoo.transforms.instance_segmentation_transform import MaskRCNNTransform, drop_crowded

MODELS = ('mask_rcnn_fpn_resnet50', 'mask_rcnn_fpn_resnet101')


def main(argv=None):
    """Train, evaluate on --val when given; return the mask mAP@0.5 (None without --val)."""
    parser = _parser()
    args = parser.parse_args(argv)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    numpy.random.seed(args.seed)  # model initialisation draws from it
    train = _load(parser, '--dataset', args.dataset, args.images, None)
    val = None if args.val is None else _load(parser, '--val', args.val, args.images,
                                              train.label_names)
    with_instances = images_with_instances(train.dataset)
    train_options.check_batchsize(args.batchsize, len(with_instances), args.dataset)
    sizes = {'min_size': args.min_size, 'max_size': args.max_size}
    pretrained = None if args.pretrained_model == 'none' else args.pretrained_model
    model = zoo.get_model(args.model, pretrained_model=pretrained,
                          n_fg_class=len(train.label_names), **sizes)
    examples = TransformDataset(with_instances, MaskRCNNTransform(model, args.seed))
    trainer = train_mask_rcnn(
        model, examples, train.label_names, out=args.out, iteration=args.iteration,
        batchsize=args.batchsize, lr=args.lr, freeze_backbone=pretrained is not None,
        device=args.device, communicator=args.communicator, seed=args.seed,
        cuda_graph=args.cuda_graph,
        resume=args.resume, model_name=args.model, model_kwargs=sizes)
    if trainer is None or val is None:
        return None
    model.use_preset('evaluate')
    result = InstanceSegmentationVOCEvaluator(
        TransformDataset(val.dataset, drop_crowded), model, iou_thresh=0.5,
        label_names=train.label_names).evaluate()
    print(json.dumps({'mask_map@0.5': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _load(parser, option, path, images, label_names):
    """The json (or folder) of ``option``; its errors end the script naming the option."""
    try:
        return load_instance_segmentation_dataset(path, label_names=label_names,
                                                  data_dir=images)
    except (ValueError, OSError) as error:
        parser.error(f'{option}: {error}')


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', required=True, help='a COCO-format json (or folder)')
    parser.add_argument('--images', default=None, help='the folder of the json images')
    parser.add_argument('--val', default=None, help='a COCO-format json to evaluate on')
    parser.add_argument('--model', choices=MODELS, default='mask_rcnn_fpn_resnet50')
    parser.add_argument('--pretrained-model', default='imagenet',
                        help="'imagenet' (the backbone), 'coco' or a file; 'none': random "
                             '(its batch norms then train: use --batchsize 4 or more, see '
                             'docs/train_instance_segmentation.md)')
    parser.add_argument('--min-size', type=argument_types.positive_int, default=800)
    parser.add_argument('--max-size', type=argument_types.positive_int, default=1333)
    train_options.add_train_options(parser, batchsize=2, iteration=20000, lr=None,
                                    lr_help='default 0.02 * batchsize / 16 (ChainerCV)')
    return parser


if __name__ == '__main__':
    train_options.run(main)
