"""Train a YOLO detector (YOLOv2 [region] or YOLOv3-style [yolo] heads) on VOC07+12 or a folder.

    python scripts/train_yolo.py --model yolov3 --dataset voc07+12 --pretrained-model voc0712
    python scripts/train_yolo.py --model yolov2_tiny --dataset voc07+12 --iteration 40000
    python scripts/train_yolo.py --model yolo_fastest_xl --pretrained-model voc \\
        --dataset mydata/ --insize 160 --iteration 200 --batchsize 8 --out result
    python scripts/train_yolo.py --cfg my.cfg --dataset mydata/ --iteration 100
    mpiexec -n 4 python scripts/train_yolo.py --communicator mpi ...

``cvzoo train MODEL --data PATH`` for a YOLO (cvzoo/cli/train.py, docs/training.md),
with this script's former defaults (yolov3, 100 epochs of 16 images), and ``--cfg``: a
Darknet cfg of one's own instead of a registered model (``--insize`` then sets its input
side). A pretrained model with other classes keeps its backbone; the heads are re-made.
Writes ``log``, ``loss.png``, snapshots and ``model_final.npz`` to --out and prints the
held-out VOC mAP, last as a JSON line.
"""

import functools

from cvzoo.cli import argument_types, entry, train, train_options


def main(argv=None):
    """Train; return the held-out mAP (None off rank 0)."""
    args = _parser().parse_args(argv)
    hyper = {'jitter': args.jitter}
    if args.cfg is None:
        return train.print_outcome(train.run(args, hyper=hyper), 'map')
    make_model = functools.partial(_cfg_model, args)
    return train.print_outcome(
        train.run(args, task='detection', make_model=make_model, hyper=hyper), 'map')


def _cfg_model(args, data):
    """The detector of ``--cfg`` for the data's classes (its heads re-made after loading
    ``--pretrained-model``)."""
    from cvzoo.models.detection.darknet import darknet_detector

    pretrained = None if args.pretrained_model == 'none' else args.pretrained_model
    model = darknet_detector.DarknetDetector(args.cfg, pretrained,
                                             n_fg_class=len(data.label_names))
    if args.insize:
        model.insize = (args.insize, args.insize)
    return model


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', default='yolov3',
                        help='a zoo YOLO detector: yolov2, yolov2_tiny, yolov3, yolo_fastest, ...')
    parser.add_argument('--cfg', type=argument_types.existing_file, default=None,
                        help='a Darknet .cfg instead of --model')
    parser.add_argument('--jitter', type=argument_types.finite_float(0, 1, high_open=True),
                        default=None, help="largest move of a crop side, as a fraction "
                        "(default: the recipe's, 0.2)")
    train.add_arguments(parser, data_flags=('--dataset', '--data'), data_default='voc07+12',
                        batchsize=16, epochs=100)
    return parser


if __name__ == '__main__':
    train_options.run(main)
