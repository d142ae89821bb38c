"""Evaluate a semantic segmenter of the zoo: per-class IoU, mIoU and accuracies.

    CVZOO_WEIGHTS_MIRROR=../shared/data/weights python scripts/eval_semantic_segmentation.py \
        --model espnet --pretrained-model camvid --dataset camvid-test \
        --data-dir ../shared/data/camvid

--dataset is camvid-test, voc2012-val, cityscapes-val, ade20k-val, or a folder holding
images/ and labels/ (see cvzoo.models.segmentation.evaluate). --pretrained-model is a
weights key or a local weight file (then --n-class, default: the dataset's classes).
"""

import pathlib
import sys
import time

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo.cli import argument_types, entry, eval_options
from cvzoo.datasets import registry
from cvzoo.evaluators import SemanticSegmentationEvaluator
from cvzoo.models import zoo
from cvzoo.models.segmentation import evaluate


def main(argv=None):
    parser = entry.ArgumentParser(description=__doc__.splitlines()[0])
    eval_options.add_eval_options(parser, example_model='espnet', batchsize=2)
    parser.add_argument('--dataset', default='camvid-test')
    parser.add_argument('--data-dir', default=None, help="the split's root folder")
    parser.add_argument('--n-class', type=argument_types.positive_int, default=None)
    parser.add_argument('--ignore-label', type=int, default=None,
                        help='label value read as ignored in a folder dataset, e.g. 255')
    args = parser.parse_args(argv)

    data = registry.load_semantic_segmentation_dataset(args.dataset, args.data_dir,
                                                       args.ignore_label, args.limit)
    n_class = args.n_class or (len(data.label_names) if data.label_names else None)
    model = zoo.get_model(args.model, pretrained_model=args.pretrained_model, n_class=n_class)
    model.to_device(args.device)
    label_names = (model.label_names or data.label_names
                   or tuple(str(k) for k in range(model.n_class)))
    evaluator = SemanticSegmentationEvaluator(data.dataset, model, label_names,
                                              batchsize=args.batchsize)
    start = time.perf_counter()
    report = evaluator.evaluate()
    seconds = time.perf_counter() - start
    print(f'{args.model} ({args.pretrained_model}) on {args.dataset}: {len(data.dataset)} '
          f'images in {seconds:.1f} s ({seconds / max(len(data.dataset), 1):.2f} s per image)')
    reported = evaluate.reported_scores(args.model, args.pretrained_model)
    print(evaluate.format_report(report, label_names, reported))
    return report


if __name__ == '__main__':
    entry.run(main)
