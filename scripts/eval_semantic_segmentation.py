"""Evaluate a semantic segmenter of the zoo: per-class IoU, mIoU and accuracies.

    python scripts/eval_semantic_segmentation.py --model espnet --pretrained-model camvid \
        --dataset camvid-test --data-dir ../shared/data/camvid

--dataset is camvid-test, voc2012-val, cityscapes-val, ade20k-val, or a folder holding
``images/`` and ``labels/`` (label PNGs named as the images); --pretrained-model is a
weights key or a local weight file (then --n-class, default: the dataset's classes).
"""

import argparse
import pathlib
import sys
import time

# NOTE: run from a checkout without installing: the repository root holds cvzoo/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cvzoo import datasets
from cvzoo.evaluators import SemanticSegmentationEvaluator
from cvzoo.models import zoo

SPLITS = {'camvid-test': (datasets.CamVidDataset, 'test'),
          'voc2012-val': (datasets.VOCSemanticSegmentationDataset, 'val'),
          'cityscapes-val': (datasets.CityscapesSemanticSegmentationDataset, 'val'),
          'ade20k-val': (datasets.ADE20KSemanticSegmentationDataset, 'val')}
# Reported scores beyond the zoo entry's one: ESPNet's README, CamVid table.
EXTRA_REPORTED = {('espnet', 'camvid'): {'mean_class_accuracy': 0.6830}}


def build_dataset(name, data_dir, ignore_label):
    if name in SPLITS:
        dataset_class, split = SPLITS[name]
        return dataset_class(data_dir or 'auto', split=split)
    root = pathlib.Path(name)
    if not (root / 'images').is_dir() or not (root / 'labels').is_dir():
        raise SystemExit(f'--dataset: expected one of {sorted(SPLITS)} or a folder with '
                         f'images/ and labels/, got {name!r}')
    return datasets.ImageLabelDirectoryDataset(root / 'images', root / 'labels', ignore_label)


def reported_scores(model_name, key):
    entries = zoo.model_info(model_name)['weights']
    scores = dict(EXTRA_REPORTED.get((model_name, key), {}))
    if key in entries:
        scores[entries[key]['reported']['metric']] = entries[key]['reported']['value']
    return scores


def print_report(report, label_names, reported):
    print(f'{"class":<16}{"IoU":>8}{"accuracy":>10}')
    for name in label_names:
        print(f'{name:<16}{100 * report[f"iou/{name}"]:>8.2f}'
              f'{100 * report[f"class_accuracy/{name}"]:>10.2f}')
    rows = (('mIoU', 'miou'), ('pixel accuracy', 'pixel_accuracy'),
            ('mean class accuracy', 'mean_class_accuracy'))
    for title, key in rows:
        claim = f'   (reported {100 * reported[key]:.2f})' if key in reported else ''
        print(f'{title:<20}{100 * report[key]:>8.2f}{claim}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', required=True, help='a zoo name, e.g. espnet')
    parser.add_argument('--pretrained-model', required=True, help='weights key or file')
    parser.add_argument('--dataset', default='camvid-test')
    parser.add_argument('--data-dir', default=None)
    parser.add_argument('--n-class', type=int, default=None)
    parser.add_argument('--ignore-label', type=int, default=None,
                        help='label value read as ignored in a folder dataset, e.g. 255')
    parser.add_argument('--batchsize', type=int, default=2)
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--limit', type=int, default=None, help='only the first N images')
    args = parser.parse_args(argv)

    dataset = build_dataset(args.dataset, args.data_dir, args.ignore_label)
    label_names = getattr(dataset, 'label_names', None)
    if args.limit is not None:
        dataset = datasets.SubDataset(dataset, 0, min(args.limit, len(dataset)))
    n_class = args.n_class or (len(label_names) if label_names else None)
    model = zoo.get_model(args.model, pretrained_model=args.pretrained_model, n_class=n_class)
    model.to_device(args.device)
    label_names = model.label_names or label_names or [str(k) for k in range(model.n_class)]
    start = time.perf_counter()
    report = SemanticSegmentationEvaluator(dataset, model, label_names,
                                           batchsize=args.batchsize).evaluate()
    seconds = time.perf_counter() - start
    print(f'{args.model} ({args.pretrained_model}) on {args.dataset}: {len(dataset)} images '
          f'in {seconds:.1f} s ({seconds / max(len(dataset), 1):.2f} s per image)')
    print_report(report, label_names, reported_scores(args.model, args.pretrained_model))
    return report


if __name__ == '__main__':
    main()
