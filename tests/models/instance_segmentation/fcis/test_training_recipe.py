"""The FCIS recipe: an example of the instance segmentation layout through the recipe's
transform and converter, two updates on the CPU and on cuda:1, its reference numbers."""

import fractions

import numpy
import pytest

from cvzoo import errors
from cvzoo.testing.synthetic_examples import synthetic_examples
from tests.helpers.recipe_updates import two_updates

NAME = 'fcis_resnet101'
# the rate of two images (the small model's BN statistics are calibrated for it:
# cvzoo.testing.small_models.calibrate_frozen_bn)
BATCH = 2


def _recipe(build_small_model):
    _, model = build_small_model(NAME)
    return model.training_recipe(seed=0)


def _assert_trained(recipe, losses, changed):
    assert all(numpy.isfinite(loss) for loss in losses), losses
    assert any(path.startswith('/model/head/') for path in changed)


def _examples(recipe, n=2):
    # two images of different sizes: the chain runs them one at a time
    return [synthetic_examples('instance_segmentation', recipe.train_chain.model.n_fg_class,
                               n=1, size=size, seed=k)[0]
            for k, size in enumerate([(40, 56), (48, 40)][:n])]


def test_two_updates_on_the_cpu(build_small_model):
    recipe = _recipe(build_small_model)
    losses, changed = two_updates(recipe, _examples(recipe), 'cpu', recipe.lr_for(BATCH))
    _assert_trained(recipe, losses, changed)


def test_two_updates_on_the_second_gpu(build_small_model, two_gpus):
    recipe = _recipe(build_small_model)
    two_gpus[0].use()
    _assert_trained(recipe, *two_updates(recipe, _examples(recipe), two_gpus[1],
                                             recipe.lr_for(BATCH)))


def test_the_transform_gives_the_resize_factor(build_small_model):
    recipe = _recipe(build_small_model)
    img, mask, label = _examples(recipe, 1)[0]
    x, bbox, _, resized_mask, scale = recipe.transform((img, mask, label))
    assert scale == pytest.approx(x.shape[2] / img.shape[2])
    assert resized_mask.shape == (1,) + x.shape[1:] and bbox.shape == (1, 4)


def test_a_batch_is_the_mean_of_its_images(build_small_model):
    recipe = _recipe(build_small_model)
    chain = recipe.train_chain
    batch = [recipe.transform(example) for example in _examples(recipe)]
    losses = []
    for example in [batch[:1], batch[1:], batch]:
        numpy.random.seed(3)  # the samplers draw from NumPy's generator
        losses.append(float(chain(*recipe.converter(example, 'cpu')).array))
    assert losses[2] == pytest.approx((losses[0] + losses[1]) / 2, rel=1e-5)


def test_a_list_of_images_needs_one_target_each(build_small_model):
    recipe = _recipe(build_small_model)
    x, bboxes, labels, masks, scales = recipe.converter(
        [recipe.transform(example) for example in _examples(recipe)], 'cpu')
    with pytest.raises(ValueError, match=r'one entry per image \(2\), got 1, 2, 2 and 2'):
        recipe.train_chain(x, bboxes[:1], labels, masks, scales)


def test_reference_numbers_and_hyper_check(build_small_model):
    recipe = _recipe(build_small_model)
    assert (recipe.lr, recipe.batchsize, recipe.weight_decay) == (1.25e-4, 1, 5e-4)
    assert recipe.lr_steps == (fractions.Fraction(28, 44),)
    assert recipe.iterations == 44 * 5623
    with pytest.raises(errors.UsageError, match='roi_n_sample'):
        recipe.train_chain.model.training_recipe(roi_n_sample=8)
