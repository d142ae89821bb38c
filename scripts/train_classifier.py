"""Train a classifier on a folder of class folders, or on scikit-learn's 8x8 digits.

Single process:      python scripts/train_classifier.py --dataset digits --out result
Several processes:   mpiexec -n 4 python scripts/train_classifier.py --communicator mpi ...
Mixed precision:     python scripts/train_classifier.py --autocast float16 ...

``cvzoo train MODEL --data DIR`` for a classifier (cvzoo/cli/train.py, docs/training.md),
with this script's former defaults: small_cnn (8 px on digits), 10 epochs of 64 images,
lr 0.05. The model's recipe trains it (momentum SGD, weight decay, cosine decay; with a
communicator the rate is multiplied by the number of processes after a linear warm-up,
Goyal et al. 2017); ``--val-dataset`` is the held-out folder (default: 20%).
"""

from cvzoo.cli import entry, train, train_options


def main(argv=None):
    """Train; return the held-out top-1 accuracy (None off rank 0)."""
    args = _parser().parse_args(argv)
    if args.model == 'small_cnn' and args.insize is None and args.data == 'digits':
        args.insize = 8
    outcome = train.run(args)
    return None if outcome is None else outcome.metric


def _parser():
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', default='small_cnn', help='a registered classifier')
    train.add_arguments(parser, data_flags=('--dataset', '--data'), data_default='digits',
                        val_flags=('--val-dataset', '--val'), batchsize=64, epochs=10, lr=0.05)
    return parser


if __name__ == '__main__':
    train_options.run(main)
