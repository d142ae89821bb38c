"""The Mask R-CNN recipes: examples of the instance segmentation layout through the
recipe's transform and converter, two updates of its optimizer on the CPU and on cuda:1,
the box convention applied once, the reference numbers and the hyper-parameter check."""

import fractions

import numpy
import pytest

from cvzoo import errors
from cvzoo.testing.synthetic_examples import synthetic_examples
from tests.helpers.recipe_updates import two_updates

CASES = ['mask_rcnn_fpn_resnet50', 'maskrcnn_resnet50_fpn',
         pytest.param('maskrcnn_resnet50_fpn_v2', marks=pytest.mark.slow)]
TORCHVISION = ('maskrcnn_resnet50_fpn', 'maskrcnn_resnet50_fpn_v2')


def _recipe(build_small_model, name):
    _, model = build_small_model(name)
    hyper = {'roi_n_sample': 64} if name in TORCHVISION else {}
    return model.training_recipe(seed=0, **hyper)


def _examples(recipe):
    return synthetic_examples('instance_segmentation', recipe.train_chain.model.n_fg_class,
                              n=3)


def _assert_trained(losses, changed):
    assert all(numpy.isfinite(loss) for loss in losses), losses
    assert any(path.startswith('/model/mask_head/') for path in changed)
    assert any(path.startswith('/model/head/') for path in changed)


@pytest.mark.parametrize('name', CASES)
def test_two_updates_on_the_cpu(name, build_small_model):
    recipe = _recipe(build_small_model, name)
    _assert_trained(*two_updates(recipe, _examples(recipe), 'cpu'))


@pytest.mark.parametrize('name', CASES)
def test_two_updates_on_the_second_gpu(name, build_small_model, two_gpus):
    recipe = _recipe(build_small_model, name)
    two_gpus[0].use()
    _assert_trained(*two_updates(recipe, _examples(recipe), two_gpus[1]))
    assert all(param.device == two_gpus[1] for param in recipe.train_chain.params())


def test_an_inclusive_model_sees_boxes_a_pixel_shorter_once(build_small_model,
                                                            monkeypatch):
    _, model = build_small_model('mask_rcnn_fpn_resnet50')
    example = _examples(model.training_recipe())[0]
    continuous = model.training_recipe(seed=0).transform(example)[1]
    model.box_convention = 'inclusive'
    recipe = model.training_recipe(seed=0)
    batch = [recipe.transform(example)]
    numpy.testing.assert_array_equal(batch[0][1], continuous - numpy.float32([0, 0, 1, 1]))
    chain, seen = recipe.train_chain, []
    creator = chain.anchor_target_creator
    monkeypatch.setattr(chain, 'anchor_target_creator',
                        lambda bbox, *args: seen.append(bbox) or creator(bbox, *args))
    chain(*recipe.converter(batch, 'cpu'))
    numpy.testing.assert_array_equal(seen[0], batch[0][1])


def test_without_augment_nothing_is_flipped(build_small_model):
    _, model = build_small_model('mask_rcnn_fpn_resnet50')
    example = _examples(model.training_recipe())[0]
    prepared = model.prepare(example[0])

    def flipped(**hyper):
        return not numpy.array_equal(model.training_recipe(**hyper).transform(example)[0],
                                     prepared)

    assert any(flipped(seed=seed) for seed in range(6))
    assert not any(flipped(seed=seed, augment=False) for seed in range(6))


def test_reference_numbers(build_small_model):
    _, chainercv = build_small_model('mask_rcnn_fpn_resnet50')
    recipe = chainercv.training_recipe()
    assert (recipe.lr_for(2), recipe.weight_decay, recipe.iterations) == (0.0025, 1e-4, 90000)
    assert recipe.lr_steps == (fractions.Fraction(2, 3), fractions.Fraction(8, 9))
    assert (recipe.warmup_iterations, recipe.warmup_start_ratio) == (500, 1 / 3)
    assert recipe.freeze is not None and chainercv.training_recipe(
        freeze_backbone=False).freeze is None
    _, torchvision = build_small_model('maskrcnn_resnet50_fpn')
    recipe = torchvision.training_recipe()
    assert (recipe.lr, recipe.batchsize, recipe.weight_decay) == (0.02, 16, 1e-4)
    assert recipe.lr_steps == (fractions.Fraction(16, 26), fractions.Fraction(22, 26))
    assert (recipe.warmup_iterations, recipe.warmup_start_ratio) == (1000, 0.001)


def test_an_unknown_hyper_parameter_is_named(build_small_model):
    _, model = build_small_model('maskrcnn_resnet50_fpn')
    with pytest.raises(errors.UsageError, match='roi_nsample'):
        model.training_recipe(roi_nsample=64)
