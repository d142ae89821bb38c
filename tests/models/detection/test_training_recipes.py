"""The training recipes of the box detectors: every family trains through its recipe.

Each registered detector is built small, a few ``(img, bbox, label)`` examples (cvzoo's
target layout: continuous boxes) go through ``recipe.transform`` and
``recipe.converter``, and ``recipe.make_optimizer()`` takes two updates of
``recipe.train_chain`` on the CPU and on 'cuda:1' of the CuPy stand-in
(``pytest --fake-cuda``): the loss is finite and the parameters changed. The box
convention of an 'inclusive' model is applied by the transform, once: the chain passes
the boxes on as they are.
"""

import fractions

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.models import list_models, model_info

DETECTORS = [name for name in list_models() if model_info(name)['task'] == 'detection']
# NOTE: large fixed inputs or a second depth of a family trained by a faster member by
# default: SSD300/512 (ssd_tiny runs SSD's code), YOLOv2/v3 (yolov2_tiny, Yolo-Fastest),
# ResNet-101 FPN, torchvision's v2 FPN (v1).
SLOW_TO_TRAIN = ('ssd300', 'ssd512', 'ssd300_vgg16', 'yolov2', 'yolov3',
                 'faster_rcnn_fpn_resnet101', 'fasterrcnn_resnet50_fpn_v2')
TRAINED = [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_TO_TRAIN else name
           for name in DETECTORS]
# fewer sampled RoIs, as the device tests take
SMALL_HYPER = {'fasterrcnn_resnet50_fpn': {'roi_n_sample': 64},
               'fasterrcnn_resnet50_fpn_v2': {'roi_n_sample': 64}}
IMAGE_SIZES = ((40, 56), (48, 40), (36, 52))


def _examples(n=3, seed=0):
    """``n`` examples of the detection layout: img (3, H, W) float32 in [0, 255], one or
    two continuous boxes well inside it, int32 labels, and a trailing field (dropped)."""
    rng = numpy.random.RandomState(seed)
    examples = []
    for i, (H, W) in enumerate(IMAGE_SIZES[:n]):
        img = rng.uniform(0, 255, (3, H, W)).astype(numpy.float32)
        bbox = numpy.array([[0.1 * W, 0.15 * H, 0.7 * W, 0.8 * H],
                            [0.4 * W, 0.3 * H, 0.9 * W, 0.7 * H]][:1 + i % 2], numpy.float32)
        label = numpy.arange(len(bbox), dtype=numpy.int32) % 2
        examples.append((img, bbox, label, numpy.zeros(len(bbox), bool)))
    return examples


def _two_updates(recipe, device):
    """Two updates of the recipe's chain on ``device``; returns the losses, the
    parameters before and after (on the host) and those the updates may change (a
    gradient and an enabled update rule: the recipe's or the model's freeze leaves some
    out)."""
    chain = recipe.train_chain
    chain.to_device(device)
    optimizer = recipe.make_optimizer(lr=1e-3)
    before = {path: backend.to_numpy(param.array).copy()
              for path, param in chain.namedparams()}
    batch = [recipe.transform(example) for example in _examples(2)]
    losses = []
    for _ in range(2):
        chain.cleargrads()
        loss = chain(*recipe.converter(batch, device))
        loss.backward()
        optimizer.update()
        losses.append(float(backend.to_numpy(loss.array)))
    after = {path: backend.to_numpy(param.array) for path, param in chain.namedparams()}
    updated = [path for path, param in chain.namedparams() if param.update_rule.enabled
               and param.grad is not None and backend.to_numpy(param.grad).any()]
    return losses, before, after, updated


def _check_training(recipe, device):
    losses, before, after, updated = _two_updates(recipe, device)
    assert all(numpy.isfinite(losses)), losses
    assert len(updated) >= 0.3 * len(before), f'{len(updated)} of {len(before)} updated'
    unchanged = [path for path in updated if numpy.array_equal(before[path], after[path])]
    assert len(unchanged) <= 0.1 * len(updated), \
        f'{len(unchanged)} of {len(updated)} updated parameters did not change'
    frozen = [path for path in before if path not in updated
              and not numpy.array_equal(before[path], after[path])]
    assert frozen == [], f'parameters changed without a gradient: {frozen[:5]}'
    if device != 'cpu':
        assert all(param.device == backend.Device(device)
                   for param in recipe.train_chain.params())


@pytest.mark.parametrize('name', TRAINED)
def test_two_updates_on_the_cpu(name, build_small_model):
    _, model = build_small_model(name)
    _check_training(model.training_recipe(seed=1, **SMALL_HYPER.get(name, {})), 'cpu')


@pytest.mark.parametrize('name', TRAINED)
def test_two_updates_on_the_second_gpu(name, build_small_model, two_gpus):
    _, model = build_small_model(name)
    two_gpus[0].use()
    _check_training(model.training_recipe(seed=1, **SMALL_HYPER.get(name, {})), 'cuda:1')


@pytest.mark.parametrize('name', DETECTORS)
def test_recipe_is_a_reference_training(name, build_small_model):
    _, model = build_small_model(name)
    recipe = model.training_recipe()
    assert recipe.optimizer == 'momentum_sgd' and recipe.momentum == 0.9
    assert recipe.weight_decay in (1e-4, 5e-4)
    assert recipe.lr_for(recipe.batchsize) == recipe.lr
    assert all(0 < step < 1 for step in recipe.lr_steps)
    assert all(isinstance(step, fractions.Fraction) for step in recipe.lr_steps)
    assert recipe.loss_keys[0] == 'main/loss' and len(recipe.loss_keys) > 1


@pytest.mark.parametrize('name', DETECTORS)
def test_unknown_hyper_parameter_is_named(name, build_small_model):
    _, model = build_small_model(name)
    with pytest.raises(errors.UsageError, match="'lr_warmup'"):
        model.training_recipe(lr_warmup=3)


@pytest.mark.parametrize('name', DETECTORS)
def test_seeded_transform_repeats_itself(name, build_small_model):
    """The transform draws from its own generator: the same seed gives the same example
    whatever NumPy's global generator does."""
    _, model = build_small_model(name)
    example = _examples(1)[0]
    first = model.training_recipe(seed=5).transform(example)
    numpy.random.seed(123)
    second = model.training_recipe(seed=5).transform(example)
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(numpy.asarray(a), numpy.asarray(b))


@pytest.mark.parametrize('name', [name for name in DETECTORS
                                  if not name.startswith('ssd')])
def test_inclusive_boxes_end_one_input_pixel_earlier(name, build_small_model):
    """Without augmentation, an 'inclusive' model's transform gives the continuous
    model's boxes with x_max, y_max one pixel smaller: shifted once, at the boundary."""
    _, model = build_small_model(name)
    example = _examples(1)[0]
    model.box_convention = 'continuous'  # Yolo-Fastest's VOC cfg builds it inclusive
    continuous = model.training_recipe(augment=False).transform(example)[1]
    model.box_convention = 'inclusive'
    inclusive = model.training_recipe(augment=False).transform(example)[1]
    numpy.testing.assert_allclose(inclusive, continuous - [0, 0, 1, 1], rtol=0, atol=1e-5)


@pytest.mark.parametrize('name', TRAINED)
def test_train_chain_takes_the_boxes_as_they_are(name, build_small_model):
    """The chain does not convert again: the same batch gives the same loss whatever the
    model's box convention."""
    _, model = build_small_model(name)
    recipe = model.training_recipe(augment=False, **SMALL_HYPER.get(name, {}))
    arguments = recipe.converter([recipe.transform(example) for example in _examples(2)],
                                 'cpu')
    losses = []
    for box_convention in ('continuous', 'inclusive'):
        model.box_convention = box_convention
        numpy.random.seed(0)  # the samplers of the R-CNN chains draw from it
        losses.append(float(recipe.train_chain(*arguments).array))
    assert losses[0] == losses[1]
