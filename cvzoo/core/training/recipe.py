"""TrainingRecipe: how a model family trains, declared by the family, run by one trainer.

Every registered model answers ``model.training_recipe(**hyper)`` with a
:class:`TrainingRecipe`: the train chain around the model, the transform that turns a
dataset example of its task (DESIGN.md's tuples, in cvzoo's box convention) into the
chain's example (augmentation, the model's preparation and its own box convention,
applied here and nowhere else), the batch converter, and the optimizer and schedule of
the family's reference training. ``cvzoo.training.train`` runs any recipe; ``cvzoo
train`` is its command.

>>> from cvzoo.core import links as L
>>> recipe = TrainingRecipe(train_chain=L.Linear(2, 3), transform=lambda example: example,
...                         lr=0.1, batchsize=32, weight_decay=1e-4)
>>> recipe.lr_for(64)
0.2
>>> type(recipe.make_optimizer()).__name__
'MomentumSGD'
"""

import dataclasses
import fractions
from collections.abc import Callable

from cvzoo import errors
from cvzoo.core import optimizers
from cvzoo.core.links.link import Link
from cvzoo.core.training import convert

OPTIMIZERS = ('momentum_sgd', 'sgd', 'adam')
# the hyper keys every family's ``training_recipe`` accepts
COMMON_HYPER_KEYS = ('seed', 'augment')
SCHEDULES = ('multistep', 'cosine', 'constant', 'poly')


def check_hyper(hyper, known):
    """Refuse a key of ``model.training_recipe(**hyper)`` outside ``known``, naming it.

    >>> check_hyper({'seed': 1}, COMMON_HYPER_KEYS)
    >>> check_hyper({'sede': 1}, COMMON_HYPER_KEYS)
    Traceback (most recent call last):
    ...
    cvzoo.errors.UsageError: training_recipe: unknown key 'sede'; known: ('seed', 'augment')
    """
    unknown = sorted(set(hyper) - set(known))
    if unknown:
        raise errors.UsageError(f'training_recipe: unknown key {unknown[0]!r}; known: '
                                f'{tuple(known)}')


@dataclasses.dataclass
class TrainingRecipe:
    """A family's training, as data.

    Attributes:
        train_chain (Link): called with the converter's output, returns the loss and
            reports ``main/loss`` (and its parts) under its name; holds the model.
        transform (callable): one dataset example of the model's task -> one example of
            the chain (called per example, in the dataset's worker; draws its randomness
            from its own seeded generator).
        converter (callable): ``converter(batch, device)`` -> the chain's arguments.
        optimizer (str): one of :data:`OPTIMIZERS`.
        lr (float): the learning rate (Adam: its ``alpha``) for ``batchsize``.
        batchsize (int): examples per iteration of the reference training.
        scale_lr (bool): :meth:`lr_for` scales ``lr`` linearly with the batch size.
        momentum (float): of ``'momentum_sgd'``.
        weight_decay (float): L2 decay added as an optimizer hook (0: none).
        iterations (int): length of the reference run.
        schedule (str): one of :data:`SCHEDULES`; ``'poly'`` is ``lr * (1 - t / T) ** 0.9``
            over the run's T iterations (DeepLab's, PSPNet's).
        lr_steps (tuple of fractions.Fraction): for ``'multistep'``, where the rate is
            multiplied by ``lr_factor``, as fractions of the run.
        lr_factor (float): the multistep factor.
        warmup_iterations (int): linear warm-up from ``warmup_start_ratio`` times the rate.
        warmup_start_ratio (float): the factor at the first iteration.
        loss_keys (tuple of str): the reported losses to print and plot, ``main/loss``
            first.
        freeze (callable or None): ``freeze(train_chain)`` disables the updates the
            reference training leaves out (a pretrained backbone's first stages).
        extras (dict): anything else the family wants its trainer to know.
    """

    train_chain: Link
    transform: Callable
    converter: Callable = convert.concat_examples
    optimizer: str = 'momentum_sgd'
    lr: float = 0.01
    batchsize: int = 16
    scale_lr: bool = True
    momentum: float = 0.9
    weight_decay: float = 0.0
    iterations: int = 10000
    schedule: str = 'multistep'
    lr_steps: tuple = (fractions.Fraction(2, 3), fractions.Fraction(8, 9))
    lr_factor: float = 0.1
    warmup_iterations: int = 0
    warmup_start_ratio: float = 1 / 3
    loss_keys: tuple = ('main/loss',)
    freeze: Callable | None = None
    extras: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f'optimizer: expected one of {OPTIMIZERS}, got {self.optimizer!r}')
        if self.schedule not in SCHEDULES:
            raise ValueError(f'schedule: expected one of {SCHEDULES}, got {self.schedule!r}')
        if not self.loss_keys or self.loss_keys[0] != 'main/loss':
            raise ValueError(f"loss_keys: expected 'main/loss' first, got {self.loss_keys!r}")

    def lr_for(self, batchsize):
        """The learning rate for ``batchsize`` examples per iteration (linear scaling when
        ``scale_lr``)."""
        if not self.scale_lr:
            return self.lr
        return self.lr * batchsize / self.batchsize

    def make_optimizer(self, lr=None):
        """The recipe's optimizer set up on ``train_chain``, its weight decay hooked and
        ``freeze`` applied.

        Args:
            lr (float or None): the rate (None: ``lr``).
        """
        lr = self.lr if lr is None else lr
        if self.optimizer == 'adam':
            optimizer = optimizers.Adam(alpha=lr)
        elif self.optimizer == 'sgd':
            optimizer = optimizers.SGD(lr=lr)
        else:
            optimizer = optimizers.MomentumSGD(lr=lr, momentum=self.momentum)
        optimizer.setup(self.train_chain)
        if self.weight_decay:
            optimizer.add_hook(optimizers.WeightDecay(self.weight_decay))
        if self.freeze is not None:
            self.freeze(self.train_chain)
        return optimizer


def settle_hyper(family, given, defaults):
    """The hyper-parameters of a family's recipe: ``defaults`` updated by ``given``.

    Args:
        family (str): names the recipe in the message (e.g. ``'SSD'``).
        given (dict): the keywords ``training_recipe(**hyper)`` received.
        defaults (dict): every key the recipe takes, with its default.

    Raises:
        cvzoo.errors.UsageError: a key of ``given`` that ``defaults`` lacks.

    >>> settle_hyper('SSD', {'seed': 3}, {'seed': 0, 'augment': True})
    {'seed': 3, 'augment': True}
    """
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise errors.UsageError(
            f'training_recipe: {family} takes the hyper-parameters {sorted(defaults)}, '
            f'got the unknown {", ".join(map(repr, unknown))}')
    return {**defaults, **given}
