"""The classification and semantic segmentation recipes: their transforms and numbers."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import links as L
from cvzoo.models.segmentation.pspnet.pspnet_train_chain import PSPNetTrainChain
from cvzoo.models.segmentation.segmentation_train_chain import SegmentationTrainChain
from cvzoo.testing.small_models import build_small_model
from cvzoo.testing.synthetic_examples import synthetic_examples


def _classifier():
    return build_small_model('resnet50')[1]


def test_classifiers_train_as_torchvisions_reference():
    recipe = _classifier().training_recipe()
    assert isinstance(recipe.train_chain, L.Classifier)
    assert recipe.lr_for(256) == pytest.approx(0.1)
    assert (recipe.optimizer, recipe.momentum, recipe.weight_decay) == ('momentum_sgd', 0.9,
                                                                         1e-4)
    assert recipe.schedule == 'multistep' and [float(s) for s in recipe.lr_steps] == \
        pytest.approx([1 / 3, 2 / 3])


def test_small_cnn_has_its_own_numbers():
    recipe = build_small_model('small_cnn')[1].training_recipe()
    assert (recipe.lr, recipe.batchsize, recipe.schedule) == (0.05, 64, 'cosine')


def test_classification_transform_augments_then_prepares():
    model = _classifier()
    img, label = synthetic_examples('classification', 3, n=1, size=(40, 56))[0]
    plain = model.training_recipe(augment=False).transform((img, label))
    numpy.testing.assert_array_equal(plain[0], model.prepare(img))
    draws = [model.training_recipe(seed=seed).transform((img, label))[0] for seed in (0, 1)]
    assert draws[0].shape == plain[0].shape
    assert not numpy.array_equal(draws[0], draws[1])
    again = model.training_recipe(seed=0).transform((img, label))[0]
    numpy.testing.assert_array_equal(again, draws[0])


def test_segmenters_train_with_poly_and_pixelwise_loss():
    model = build_small_model('fcn_resnet50')[1]
    recipe = model.training_recipe()
    assert isinstance(recipe.train_chain, SegmentationTrainChain)
    assert recipe.schedule == 'poly' and recipe.lr_for(32) == pytest.approx(0.02)


def test_pspnet_trains_as_chainercv():
    recipe = build_small_model('pspnet_resnet50')[1].training_recipe()
    assert isinstance(recipe.train_chain, PSPNetTrainChain)
    assert recipe.lr_for(16) == pytest.approx(0.01)
    assert recipe.loss_keys == ('main/loss', 'main/main_loss', 'main/aux_loss')


@pytest.mark.parametrize('augment', [True, False])
@pytest.mark.parametrize('name, size', [('espnet', (64, 64)),  # resized to its preset's
                                        ('segnet_basic', (40, 56))])  # at its own size
def test_segmentation_transform_gives_the_networks_input_size(name, size, augment):
    model = build_small_model(name)[1]
    img, label = synthetic_examples('semantic_segmentation', 3, n=1, size=(40, 56))[0]
    x, out_label = model.training_recipe(augment=augment).transform((img, label))
    assert x.shape == (3,) + size and out_label.shape == size
    assert set(numpy.unique(out_label)) <= set(numpy.unique(label)) | {-1}
    if not augment:
        numpy.testing.assert_array_equal(x, model.prepare(img))


def test_segmenters_at_their_own_size_pad_their_batches():
    model = build_small_model('segnet_basic')[1]
    recipe = model.training_recipe(augment=False)
    small, large = (synthetic_examples('semantic_segmentation', 3, n=1, size=size)[0]
                    for size in ((8, 10), (12, 16)))
    x, label = recipe.converter([recipe.transform(small), recipe.transform(large)])
    assert x.shape == (2, 3, 12, 16) and (label[0, 8:] == -1).all()


def test_unknown_keys_are_named():
    model = build_small_model('segnet_basic')[1]
    with pytest.raises(errors.UsageError, match="unknown key 'flip'"):
        model.training_recipe(flip=False)


def test_pspnet_crops_at_its_own_scale():
    model = build_small_model('pspnet_resnet50')[1]  # input_size (64, 64)
    img, label = synthetic_examples('semantic_segmentation', 3, n=1, size=(80, 90))[0]
    x, out_label = model.training_recipe(augment=False).transform((img, label))
    numpy.testing.assert_array_equal(x, model.prepare(img)[:, 8:72, 13:77])
    numpy.testing.assert_array_equal(out_label, label[8:72, 13:77])
    x, out_label = model.training_recipe().transform((img, label))
    assert x.shape == (3, 64, 64) and out_label.shape == (64, 64)
