"""ssd_training_recipe: how an SSD trains (``SSD.training_recipe``).

Two references, chosen by the model's ``training_reference``:

- ``'chainercv'`` (SSD300, SSD512, SSDTiny): ChainerCV's ``examples/ssd/train.py``,
  VOC07+12 trainval: MomentumSGD (momentum 0.9) at lr 1e-3 for 32 images per
  iteration, weight decay 5e-4, 120,000 iterations, the rate x0.1 at 80,000 and 100,000.
  ChainerCV also doubles the biases' gradients and leaves them undecayed; here every
  parameter decays alike.
- ``'torchvision'`` (SSD300VGG16): torchvision's ``references/detection`` for
  ``ssd300_vgg16``: SGD (momentum 0.9) at lr 0.002 for 32 images (8 GPUs x 4), weight
  decay 5e-4, 120 epochs of COCO train2017 (117,266 images with boxes, 3,665 iterations
  each: 439,800), the rate x0.1 at epochs 80 and 110, after a linear warm-up over the
  first 1,000 iterations from 0.001 times the rate.

Both augment as the paper does (:class:`~cvzoo.models.detection.ssd.augmentation.SSDTransform`:
colour distortion, zoom-out, constrained crop, resize, flip), and the transform encodes
the per-anchor targets once, regressing to the boxes in the model's box convention (the
anchors are matched to the continuous boxes); ``SSDTrainChain`` takes them as they are.

Hyper-parameters: ``seed`` (0) and ``augment`` (True), as every recipe; ``alpha`` (1)
and ``k`` (3), the localisation weight and hard negatives per positive of the loss;
``max_expand_ratio`` (4), the largest zoom-out.
"""

import fractions

from cvzoo.core.training import convert, recipe
from cvzoo.models.detection import torchvision_schedule
from cvzoo.models.detection.ssd import augmentation, train_chain

HYPER = {'seed': 0, 'augment': True, 'alpha': 1.0, 'k': 3, 'max_expand_ratio': 4}
LOSS_KEYS = ('main/loss', 'main/loss/loc', 'main/loss/conf')
# the numbers of each reference training (see the module docstring)
REFERENCES = {
    'chainercv': {'lr': 1e-3, 'batchsize': 32, 'weight_decay': 5e-4, 'iterations': 120000,
                  'lr_steps': (fractions.Fraction(2, 3), fractions.Fraction(5, 6))},
    'torchvision': torchvision_schedule.torchvision_schedule(2e-3, 32, 120, (80, 110), 5e-4),
}


def ssd_training_recipe(model, **hyper):
    """The :class:`~cvzoo.core.training.recipe.TrainingRecipe` of an SSD ``model``.

    Args:
        model (SSD): the detector (its ``training_reference`` picks the numbers).
        **hyper: ``seed``, ``augment``, ``alpha``, ``k``, ``max_expand_ratio`` (see the
            module docstring).

    Raises:
        cvzoo.errors.UsageError: an unknown hyper-parameter.

    >>> from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
    >>> recipe = ssd_training_recipe(SSDTiny(n_fg_class=2), seed=1)
    >>> recipe.lr, recipe.batchsize, recipe.iterations
    (0.001, 32, 120000)
    """
    hyper = recipe.settle_hyper(type(model).__name__, hyper, HYPER)
    transform = augmentation.SSDTransform(
        model.coder, model.insize, model.mean, hyper['max_expand_ratio'],
        box_convention=model.box_convention, seed=hyper['seed'], augment=hyper['augment'])
    return recipe.TrainingRecipe(
        train_chain=train_chain.SSDTrainChain(model, alpha=hyper['alpha'], k=hyper['k']),
        transform=transform, converter=convert.concat_examples, loss_keys=LOSS_KEYS,
        **{'optimizer': 'momentum_sgd', 'momentum': 0.9,
           **REFERENCES[model.training_reference]})
