"""Train an SSD on VOC07+12 or on a VOC-layout folder of one's own images.

    python scripts/train_ssd.py --dataset voc07+12 --model ssd300 --pretrained-model imagenet
    python scripts/train_ssd.py --dataset shapes/ --model ssd_tiny --insize 64 \\
        --iteration 1500 --batchsize 16 --optimizer adam --lr 2e-3 --out result

Writes ``log`` (JSON lines), ``loss.png``, snapshots and ``model_final.npz`` to --out and
prints the VOC mAP (11-point metric) of the test split at the end. ``--resume`` continues
from the latest snapshot in --out.
"""

import fractions
import json

import numpy

from cvzoo.cli import argument_types, entry, train_options
from cvzoo.core.optimizers import Adam, MomentumSGD, WeightDecay
from cvzoo.core.training.extensions import fail_on_non_number
from cvzoo.datasets.registry import load_detection_training_splits
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.evaluators.detection_evaluators import DetectionVOCEvaluator
from cvzoo.models import zoo
from cvzoo.models.detection.train_detector import train_detector

MODELS = ('ssd300', 'ssd512', 'ssd_tiny')  # registry names of the SSDs trained here
PARTS = ['main/loss', 'main/loss/loc', 'main/loss/conf']


def _optimizer(args, chain):
    if args.optimizer == 'adam':
        return Adam(alpha=args.lr).setup(chain)
    optimizer = MomentumSGD(lr=args.lr).setup(chain)
    optimizer.add_hook(WeightDecay(5e-4))
    return optimizer


def main(argv=None):
    """Train, evaluate on the test split and return the mAP."""
    args = _parser().parse_args(argv)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    numpy.random.seed(args.seed)  # model initialisation and augmentation draw from it
    train, test, label_names = load_detection_training_splits(args.dataset)
    train_options.check_batchsize(args.batchsize, len(train), args.dataset)
    # NOTE: model_final.npz also holds the class count, names and input size, so that
    # `cvzoo predict IMG --model ssd_tiny --pretrained-model result/model_final.npz` works.
    extra = {'insize': args.insize} if args.model == 'ssd_tiny' else {}
    model = zoo.get_model(args.model, pretrained_model=args.pretrained_model,
                          n_fg_class=len(label_names), **extra)
    # the recipe's transform encodes the targets in the model's box convention
    recipe = model.training_recipe(seed=args.seed, max_expand_ratio=args.max_expand_ratio)
    optimizer = _optimizer(args, recipe.train_chain)
    # Adam's step size is alpha: only SGD's lr is shifted
    steps = (fractions.Fraction(2, 3), fractions.Fraction(5, 6)) if args.optimizer == 'sgd' else ()
    trainer = train_detector(
        model, optimizer, TransformDataset(train, recipe.transform), label_names, out=args.out,
        batchsize=args.batchsize, iteration=args.iteration, loss_keys=PARTS, lr_steps=steps,
        device=args.device, communicator=args.communicator, seed=args.seed,
        cuda_graph=args.cuda_graph,
        resume=args.resume, model_name=args.model, model_kwargs=extra,
        guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    if trainer is None:  # not rank 0
        return None
    model.use_preset('evaluate')
    result = DetectionVOCEvaluator(test, model, use_07_metric=True,
                                   label_names=label_names).evaluate()
    print(json.dumps({'map': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='voc07+12', help="'voc07+12' or a VOC folder")
    parser.add_argument('--model', choices=MODELS, default='ssd300')
    parser.add_argument('--pretrained-model', default=None, help="'imagenet' or a file")
    parser.add_argument('--insize', type=argument_types.positive_int, default=96,
                        help='input side (ssd_tiny)')
    parser.add_argument('--optimizer', choices=('sgd', 'adam'), default='sgd')
    parser.add_argument('--max-expand-ratio', type=argument_types.finite_float(1), default=4,
                        help='largest zoom-out of the augmentation (1: none)')
    train_options.add_train_options(parser, batchsize=32, iteration=120000, lr=1e-3)
    return parser


if __name__ == '__main__':
    train_options.run(main)
