"""The learning-rate schedule of a recipe, as one trainer extension.

A recipe's ``schedule`` ('multistep', 'cosine', 'constant' or 'poly') and its linear
warm-up set one optimizer attribute (``lr``; Adam's ``alpha``), so they are one
extension: two would overwrite each other.
"""

import math

from cvzoo.core.training.extensions import (
    CosineShift,
    MultistepShift,
    PolynomialShift,
    WarmupShift,
)

POLY_POWER = 0.9  # DeepLab's, ChainerCV's PSPNet, torchvision's segmentation reference


def rate_attribute(recipe):
    """The optimizer attribute the schedule sets: Adam's step size is ``alpha``."""
    return 'alpha' if recipe.optimizer == 'adam' else 'lr'


def warmup_iterations(recipe, n_iteration):
    """The recipe's warm-up, or a quarter of a run too short for it.

    >>> from types import SimpleNamespace
    >>> recipe = SimpleNamespace(warmup_iterations=500)
    >>> warmup_iterations(recipe, 90000), warmup_iterations(recipe, 1000)
    (500, 250)
    """
    return min(recipe.warmup_iterations, n_iteration // 4)


def make_schedule(recipe, lr, n_iteration):
    """The extension that sets the rate at every iteration, or None (a constant rate
    without warm-up).

    Args:
        recipe (TrainingRecipe): its ``schedule``, ``lr_steps``, ``lr_factor``,
            ``warmup_iterations`` and ``warmup_start_ratio``.
        lr (float): the peak rate of this run.
        n_iteration (int): the length of the run.

    >>> from cvzoo.core import links as L
    >>> from cvzoo.core.training.recipe import TrainingRecipe
    >>> recipe = TrainingRecipe(L.Linear(1, 1), None, schedule='cosine',
    ...                         warmup_iterations=2, warmup_start_ratio=0.5)
    >>> shift = make_schedule(recipe, 1.0, 10)
    >>> [round(shift.compute(t), 3) for t in (0, 1, 2, 6, 10)]
    [0.5, 0.75, 1.0, 0.5, 0.0]
    """
    attr = rate_attribute(recipe)
    warmup = warmup_iterations(recipe, n_iteration)
    ratio = recipe.warmup_start_ratio
    if recipe.schedule == 'multistep':
        steps = [math.floor(n_iteration * step) for step in recipe.lr_steps]
        return MultistepShift(attr, recipe.lr_factor, steps, init=lr, warmup_iter=warmup,
                              warmup_start_ratio=ratio)
    if recipe.schedule == 'cosine':
        return CosineShift(attr, n_iteration, init=lr, warmup_iter=warmup,
                           warmup_start=lr * ratio)
    if recipe.schedule == 'poly':
        return PolynomialShift(attr, POLY_POWER, n_iteration, init=lr, warmup_iter=warmup,
                               warmup_start_ratio=ratio)
    if warmup > 0:
        return WarmupShift(attr, lr * ratio, warmup, init=lr)
    return None
