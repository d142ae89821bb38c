"""Train a YOLO detector (YOLOv2 [region] or YOLOv3-style [yolo] heads) on VOC07+12 or a folder.

    python scripts/train_yolo.py --model yolov3 --dataset voc07+12 --pretrained-model voc0712
    python scripts/train_yolo.py --model yolov2_tiny --dataset voc07+12 --iteration 40000
    python scripts/train_yolo.py --model yolo_fastest_xl --pretrained-model voc \\
        --dataset mydata/ --insize 160 --iteration 200 --batchsize 8 --out result
    python scripts/train_yolo.py --cfg my.cfg --dataset mydata/ --iteration 100
    mpiexec -n 4 python scripts/train_yolo.py --communicator mpi ...

Darknet-style augmentation (crop jitter, flip, colour distortion), momentum SGD with
weight decay 5e-4 and x0.1 steps at 80% and 90% of the run, as Darknet's cfgs. A
pretrained model with other classes keeps its backbone; the heads are re-made. Writes
``log``, ``loss.png``, snapshots and ``model_final.npz`` to --out and prints the VOC
mAP of the test split (the model's own metric: 11-point for YOLOv2 and YOLOv3). The
loss of each head kind is YOLOTrainChain's (cvzoo/models/detection/darknet/).
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
from cvzoo.models.detection.darknet import darknet_detector
from cvzoo.models.detection.train_detector import train_detector

PARTS = ['main/loss', 'main/loss/xy', 'main/loss/wh', 'main/loss/obj', 'main/loss/cls']
# zoo models whose constructor takes ``insize``: it is saved with the trained weights
TAKES_INSIZE = ('yolo_fastest', 'yolo_fastest_xl')


def _model_kwargs(args):
    """Constructor arguments saved in model_final.npz besides the class count."""
    if args.insize and not args.cfg and args.model in TAKES_INSIZE:
        return {'insize': args.insize}
    return {}


def _model(args, n_fg_class):
    if args.cfg:
        model = darknet_detector.DarknetDetector(args.cfg, args.pretrained_model,
                                                 n_fg_class=n_fg_class)
    else:
        model = zoo.get_model(args.model, pretrained_model=args.pretrained_model,
                              n_fg_class=n_fg_class, **_model_kwargs(args))
    if args.insize:
        model.insize = (args.insize, args.insize)
    return model


def main(argv=None):
    """Train, evaluate on the test split and return the mAP."""
    args = _parser().parse_args(argv)
    train_options.check_cuda_graph(args.cuda_graph, args.device)
    numpy.random.seed(args.seed)  # model initialisation and augmentation draw from it
    train, test, label_names = load_detection_training_splits(args.dataset)
    train_options.check_batchsize(args.batchsize, len(train), args.dataset)
    model = _model(args, len(label_names))
    # the recipe's transform gives the boxes in the model's box convention
    recipe = model.training_recipe(seed=args.seed, jitter=args.jitter)
    optimizer = MomentumSGD(lr=args.lr, momentum=0.9).setup(recipe.train_chain)
    optimizer.add_hook(WeightDecay(5e-4))
    trainer = train_detector(
        model, optimizer, TransformDataset(train, recipe.transform), label_names, out=args.out,
        batchsize=args.batchsize, iteration=args.iteration, epoch=args.epoch, loss_keys=PARTS,
        lr_steps=(fractions.Fraction(4, 5), fractions.Fraction(9, 10)),
        converter=recipe.converter, device=args.device,
        communicator=args.communicator, seed=args.seed, resume=args.resume,
        cuda_graph=args.cuda_graph,
        # a cfg model is rebuilt from its cfg, not the registry: its weights only
        model_name=None if args.cfg else args.model, model_kwargs=_model_kwargs(args),
        guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',), check_params=False))
    if trainer is None:  # not rank 0
        return None
    model.use_preset('evaluate')
    result = DetectionVOCEvaluator(test, model, use_07_metric=model.use_07_metric,
                                   label_names=label_names).evaluate()
    print(json.dumps({'map': result['map'], 'elapsed_time': trainer.elapsed_time}))
    return result['map']


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dataset', default='voc07+12', help="'voc07+12' or a VOC folder")
    parser.add_argument('--model', default='yolov3',
                        help='a zoo YOLO detector: yolov2, yolov2_tiny, yolov3, yolo_fastest, ...')
    parser.add_argument('--cfg', type=argument_types.existing_file, default=None,
                        help='a Darknet .cfg instead of --model')
    parser.add_argument('--pretrained-model', default=None, help='a weights key or a file')
    parser.add_argument('--insize', type=argument_types.positive_int, default=None,
                        help='square input side')
    parser.add_argument('--epoch', type=argument_types.positive_int, default=100,
                        help='used without --iteration')
    parser.add_argument('--jitter', type=argument_types.finite_float(0, 1, high_open=True),
                        default=0.2, help='largest move of a crop side, as a fraction')
    train_options.add_train_options(parser, batchsize=16, iteration=None, lr=1e-3)
    return parser


if __name__ == '__main__':
    train_options.run(main)
