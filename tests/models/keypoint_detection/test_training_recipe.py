"""The Keypoint R-CNN recipe: examples of the keypoint layout through the recipe's
transform and converter, two updates on the CPU and on cuda:1, the box convention
applied once, the flip of the keypoints, the reference numbers and the hyper check."""

import fractions

import numpy
import pytest

from cvzoo import errors
from cvzoo.testing.synthetic_examples import synthetic_examples
from tests.helpers.recipe_updates import two_updates

NAME = 'keypointrcnn_resnet50_fpn'


def _model(build_small_model):
    return build_small_model(NAME)[1]


def _examples(model, n=2):
    return synthetic_examples('keypoint_detection', model.n_fg_class, n=n,
                              n_point=model.n_point)


def _assert_trained(losses, changed):
    assert all(numpy.isfinite(loss) for loss in losses), losses
    assert any(path.startswith('/model/keypoint_head/') for path in changed)
    assert any(path.startswith('/model/head/') for path in changed)


def test_two_updates_on_the_cpu(build_small_model):
    model = _model(build_small_model)
    recipe = model.training_recipe(roi_n_sample=64, flip_indices=range(model.n_point))
    _assert_trained(*two_updates(recipe, _examples(model), 'cpu'))


def test_two_updates_on_the_second_gpu(build_small_model, two_gpus):
    model = _model(build_small_model)
    recipe = model.training_recipe(roi_n_sample=64)
    two_gpus[0].use()
    _assert_trained(*two_updates(recipe, _examples(model), two_gpus[1]))


def test_an_inclusive_model_sees_boxes_a_pixel_shorter_once(build_small_model,
                                                            monkeypatch):
    model = _model(build_small_model)
    example = _examples(model, 1)[0]
    continuous = model.training_recipe(seed=0).transform(example)[1]
    model.box_convention = 'inclusive'
    recipe = model.training_recipe(seed=0, roi_n_sample=64)
    batch = [recipe.transform(example)]
    numpy.testing.assert_array_equal(batch[0][1], continuous - numpy.float32([0, 0, 1, 1]))
    chain, seen = recipe.train_chain, []
    rpn_targets = chain._rpn_targets
    monkeypatch.setattr(chain, '_rpn_targets',
                        lambda anchor, bboxes: seen.extend(bboxes) or rpn_targets(anchor,
                                                                                  bboxes))
    chain(*recipe.converter(batch, 'cpu'))
    numpy.testing.assert_array_equal(seen[0], batch[0][1])


def test_a_flip_mirrors_the_points_and_swaps_left_and_right(build_small_model):
    model = _model(build_small_model)
    img, point, visible, label, bbox = _examples(model, 1)[0]
    visible[0, 1] = False
    swap = [1, 0] + list(range(2, model.n_point))
    kept = model.training_recipe(augment=False).transform((img, point, visible, label, bbox))
    for seed in range(8):
        x, _, _, flipped, flipped_visible, size = model.training_recipe(
            seed=seed, flip_indices=swap).transform((img, point, visible, label, bbox))
        if not numpy.array_equal(x, kept[0]):
            break
    numpy.testing.assert_array_equal(x, kept[0][:, :, ::-1])
    numpy.testing.assert_allclose(flipped[0, 0, 0], size[1] - kept[3][0, 1, 0], rtol=1e-6)
    assert flipped_visible[0].tolist() == kept[4][0][swap].tolist()


def test_reference_numbers_and_hyper_checks(build_small_model):
    model = _model(build_small_model)
    recipe = model.training_recipe()
    assert (recipe.lr, recipe.batchsize, recipe.weight_decay) == (0.02, 16, 1e-4)
    assert recipe.lr_steps == (fractions.Fraction(36, 46), fractions.Fraction(43, 46))
    assert (recipe.warmup_iterations, recipe.warmup_start_ratio) == (1000, 0.001)
    assert recipe.transform.flip_indices is None  # 5 keypoints: no known mirror
    with pytest.raises(errors.UsageError, match='flip_index'):
        model.training_recipe(flip_index=[0])
    with pytest.raises(ValueError, match='flip_indices'):
        model.training_recipe(flip_indices=[0, 0, 1, 2, 3])
