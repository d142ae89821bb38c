"""Train the registered small Mask R-CNN, ``mask_rcnn_tiny``, from scratch on generated
shapes and measure its mask mAP on held-out images: the training proof of the code path
of ``cvzoo train`` for Mask R-CNN (cvzoo.training.train with the model's recipe,
ChainerCV's Mask R-CNN recipe with fewer RoIs), on any device.

    python bench/train_small_mask_rcnn.py --device cuda:0 --time-budget 300 --out OUT

The shapes (cvzoo.testing.synthetic_data, non-overlapping, 1 to 3 per image) are written
as a COCO json, read by the dataset registry and augmented by the recipe's transform, as
a user's data would be. The number of iterations is ``--iteration`` or, with
``--time-budget``, what fits that many seconds at the speed of ten timed steps. Prints
and writes (``--out``/result.json) the settings, seconds per iteration, the final losses
and the mask mAP@0.5 and @0.7 (VOC, InstanceSegmentationVOCEvaluator) on the held-out
and on as many training images.
"""

import argparse
import dataclasses
import json
import os
import pathlib
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from cvzoo.datasets.registry import load_instance_segmentation_dataset  # noqa: E402
from cvzoo.datasets.sub_dataset import SubDataset  # noqa: E402
from cvzoo.datasets.transform_dataset import TransformDataset  # noqa: E402
from cvzoo.evaluators.instance_segmentation_evaluators import (  # noqa: E402
    InstanceSegmentationVOCEvaluator,
)
from cvzoo.models import get_model  # noqa: E402
from cvzoo.testing import synthetic_data  # noqa: E402
from cvzoo.training import train as train_model  # noqa: E402
from cvzoo.transforms.instance_segmentation_transform import drop_crowded  # noqa: E402


def make_shapes(root, size, n_train, n_val):
    """The train and val jsons of generated shapes under ``root`` (written once)."""
    root = pathlib.Path(root)
    if not (root / 'annotations' / 'instances_val.json').exists():
        synthetic_data.write_coco(
            root, synthetic_data.shape_scenes(n_train, size, seed=0, overlap=False),
            synthetic_data.shape_scenes(n_val, size, seed=1, overlap=False),
            kind='instances', masks='mixed')
    train = load_instance_segmentation_dataset(
        str(root / 'annotations' / 'instances_train.json'))
    val = load_instance_segmentation_dataset(
        str(root / 'annotations' / 'instances_val.json'), label_names=train.label_names)
    return train, val


def build_model(n_fg_class, args):
    """``mask_rcnn_tiny`` resizing images to ``--size`` pixels, its weights drawn from
    ``--seed``."""
    numpy.random.seed(args.seed)
    return get_model('mask_rcnn_tiny', n_fg_class=n_fg_class, min_size=args.size,
                     max_size=args.size)


def small_recipe(model, args):
    """The model's recipe with ``--n-sample`` RoIs per image (and ``--optimizer``)."""
    recipe = model.training_recipe(seed=args.seed, roi_n_sample=args.n_sample)
    if args.optimizer is not None:
        recipe = dataclasses.replace(recipe, optimizer=args.optimizer)
    return recipe


def seconds_per_step(model, dataset, args):
    """Median seconds of ten training steps (after two) on a copy of the train chain."""
    recipe = small_recipe(model, args)
    chain = recipe.train_chain.to_device(args.device)
    optimizer = recipe.make_optimizer(lr=0.0)
    dataset = TransformDataset(dataset, recipe.transform)
    times = []
    for i in range(12):
        batch = recipe.converter([dataset[(i * args.batchsize + j) % len(dataset)]
                                  for j in range(args.batchsize)], args.device)
        start = time.perf_counter()
        optimizer.update(chain, *batch)
        model.device.synchronize()  # the step's kernels end before the clock stops
        times.append(time.perf_counter() - start)
    return float(numpy.median(times[2:]))


def mask_map(model, dataset, label_names):
    """VOC mask AP at 0.5 and 0.7 of ``model`` on ``dataset``."""
    model.use_preset('evaluate')
    result = {}
    for thresh in (0.5, 0.7):
        report = InstanceSegmentationVOCEvaluator(
            TransformDataset(dataset, drop_crowded), model, iou_thresh=thresh,
            label_names=label_names).evaluate()
        result[f'map@{thresh}'] = float(report['map'])
    return result


def main(argv=None):
    """Run the measurement (``argv``: the command-line arguments; None reads sys.argv)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--out', default='result/small_mask_rcnn')
    parser.add_argument('--data', default=None, help='shapes folder (default OUT/shapes)')
    parser.add_argument('--size', type=int, default=96)
    parser.add_argument('--n-train', type=int, default=400)
    parser.add_argument('--n-val', type=int, default=50)
    parser.add_argument('--batchsize', type=int, default=4)
    parser.add_argument('--lr', type=float, default=None,
                        help="default: the recipe's for the batch size")
    parser.add_argument('--optimizer', choices=('momentum_sgd', 'sgd', 'adam'), default=None,
                        help="default: the recipe's (adam)")
    parser.add_argument('--n-sample', type=int, default=64, help='RoIs per image')
    parser.add_argument('--iteration', type=int, default=None)
    parser.add_argument('--time-budget', type=float, default=None,
                        help='seconds of training (sets the iterations)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    train, val = make_shapes(args.data or os.path.join(args.out, 'shapes'), args.size,
                             args.n_train, args.n_val)
    model = build_model(len(train.label_names), args)
    model.to_device(args.device)
    step = seconds_per_step(model, train.dataset, args)
    model = build_model(len(train.label_names), args)
    iteration = args.iteration or max(int(args.time_budget / step) // 100 * 100, 100)
    start = time.perf_counter()
    train_model(model, train.dataset, 'instance_segmentation', train.label_names,
                out=args.out, recipe=small_recipe(model, args), iterations=iteration,
                batchsize=args.batchsize, lr=args.lr, device=args.device, seed=args.seed)
    trained = time.perf_counter() - start
    with open(os.path.join(args.out, 'log')) as f:
        last = json.loads(f.read().splitlines()[-1])
    result = {'device': args.device, 'size': args.size, 'n_train': args.n_train,
              'batchsize': args.batchsize, 'optimizer': args.optimizer, 'lr': args.lr,
              'n_sample': args.n_sample,
              'iteration': iteration, 'timed_step_s': step, 'train_s': trained,
              'losses': {k: v for k, v in last.items() if k.startswith('main/')},
              'val': mask_map(model, val.dataset, train.label_names),
              'train': mask_map(model, SubDataset(train.dataset, 0, args.n_val),
                                train.label_names)}
    print(json.dumps(result))
    with open(os.path.join(args.out, 'result.json'), 'w') as f:
        json.dump(result, f, indent=1)
    return result


if __name__ == '__main__':
    main()
