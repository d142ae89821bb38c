"""Evaluate a zoo classifier on the ImageNet validation set (top-1/top-5 error).

    python scripts/eval_imagenet.py --model resnet50 --pretrained-model imagenet \
        --dataset ~/data/imagenet/val [--crop center|ten] [--batchsize 32] [--device cpu]

``--dataset`` is a folder per class (wnid folder names) or a ``path label`` list.
The top-1 error the weights' source reports is printed beside the measured one.
"""

import pathlib
import sys

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import entry, eval_options
from cvzoo.datasets import registry
from cvzoo.models import zoo
from cvzoo.models.classification import evaluate


def _reported(model_name, key):
    entry = zoo.model_info(model_name)['weights'].get(key)
    if entry is None or entry['reported']['metric'] != 'top1':
        return 'n/a'
    score = entry['reported']
    return f"{100 * (1 - score['value']):.2f} % ({score['source']})"


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.split('\n')[0])
    eval_options.add_eval_options(parser, example_model='resnet50', batchsize=32,
                                  pretrained_model='imagenet')
    parser.add_argument('--source', default=None, help='name mapping of a local file')
    parser.add_argument('--dataset', required=True, help='class folders or a file list')
    parser.add_argument('--crop', choices=evaluate.CROPS, default='center')
    args = parser.parse_args(argv)

    kwargs = {'source': args.source} if args.source else {}
    model = zoo.get_model(args.model, pretrained_model=args.pretrained_model, **kwargs)
    model.to_device(args.device)
    dataset = registry.load_classification_dataset(args.dataset)
    result = evaluate.evaluate(model, dataset, crop=args.crop, batchsize=args.batchsize,
                               limit=args.limit)
    print(f'model {args.model}, weights {args.pretrained_model}, crop {args.crop}, '
          f'{result["n_image"]} images')
    print(f'top-1 error {100 * result["top1_error"]:.2f} %   '
          f'(reported: {_reported(args.model, args.pretrained_model)})')
    print(f'top-5 error {100 * result["top5_error"]:.2f} %')
    return 0


if __name__ == '__main__':
    entry.run(main)
