"""Train Faster R-CNN (VGG16, or FPN on ResNet-50/101) on VOC07 or a VOC-layout folder.

    python scripts/train_faster_rcnn.py --dataset voc07 --model faster_rcnn_vgg16 \\
        --pretrained-model imagenet
    python scripts/train_faster_rcnn.py --dataset shapes/ --model faster_rcnn_vgg16 \\
        --min-size 128 --max-size 192 --iteration 200 --out result

One image per iteration, as ChainerCV's examples/faster_rcnn: resized as predict() does,
randomly flipped; MomentumSGD (lr 1e-3, weight decay 5e-4, lr x 0.1 at 5/7 of the run).
Writes ``log``, ``loss.png``, snapshots and ``model_final.npz`` to --out and prints the
VOC07 mAP (11-point metric) of the test split.
"""

import fractions
import json

import numpy

from cvzoo.cli import argument_types, entry, train_options
from cvzoo.core.optimizers import MomentumSGD, WeightDecay
from cvzoo.core.training.extensions import fail_on_non_number
from cvzoo.datasets.registry import load_detection_training_splits
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators.detection_evaluators import DetectionVOCEvaluator
from cvzoo.models import zoo
from cvzoo.models.detection.train_detector import train_detector

MODELS = ('faster_rcnn_vgg16', 'faster_rcnn_fpn_resnet50', 'faster_rcnn_fpn_resnet101')


def main(argv=None):
    """Train, evaluate on the test split and return the mAP."""
    args = _parser().parse_args(argv)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    numpy.random.seed(args.seed)  # model initialisation and augmentation draw from it
    train, test, label_names = load_detection_training_splits(args.dataset)
    sizes = {'min_size': args.min_size, 'max_size': args.max_size}
    model = zoo.get_model(args.model, pretrained_model=args.pretrained_model,
                          n_fg_class=len(label_names), **sizes)
    # the recipe's train chain, and its transform with the boxes in the model's convention
    recipe = model.training_recipe(seed=args.seed)
    optimizer = MomentumSGD(lr=args.lr).setup(recipe.train_chain)
    optimizer.add_hook(WeightDecay(5e-4))
    trainer = train_detector(
        model, optimizer, TransformDataset(train, recipe.transform),
        label_names, out=args.out, batchsize=1, iteration=args.iteration,
        loss_keys=list(recipe.loss_keys), lr_steps=(fractions.Fraction(5, 7),),
        converter=recipe.converter, device=args.device, seed=args.seed,
        cuda_graph=args.cuda_graph,
        resume=args.resume, model_name=args.model, model_kwargs=sizes,
        guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    model.use_preset('evaluate')
    result = DetectionVOCEvaluator(test, model, use_07_metric=True,
                                   label_names=label_names).evaluate()
    print(json.dumps({'map': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='voc07', help="'voc07' or a VOC folder")
    parser.add_argument('--model', choices=MODELS, default='faster_rcnn_vgg16')
    parser.add_argument('--pretrained-model', default=None, help="'imagenet' or a file")
    parser.add_argument('--min-size', type=argument_types.positive_int, default=600)
    parser.add_argument('--max-size', type=argument_types.positive_int, default=1000)
    train_options.add_train_options(parser, iteration=70000, lr=1e-3, communicator=False)
    return parser


if __name__ == '__main__':
    train_options.run(main)
