"""Optimizers and their update rules: ``from cvzoo.core import optimizers``."""

from cvzoo.core.optimizers.adam import Adam, AdamRule, AdamW
from cvzoo.core.optimizers.hooks import GradientClipping, GradientLARS, WeightDecay
from cvzoo.core.optimizers.hyperparameter import Hyperparameter
from cvzoo.core.optimizers.momentum_sgd import MomentumSGD, MomentumSGDRule
from cvzoo.core.optimizers.nesterov_ag import NesterovAG, NesterovAGRule
from cvzoo.core.optimizers.optimizer import Optimizer
from cvzoo.core.optimizers.rmsprop import RMSprop, RMSpropRule
from cvzoo.core.optimizers.sgd import SGD, SGDRule
from cvzoo.core.optimizers.update_rule import UpdateRule

__all__ = [
    'SGD', 'Adam', 'AdamRule', 'AdamW', 'GradientClipping', 'GradientLARS', 'Hyperparameter',
    'MomentumSGD', 'MomentumSGDRule', 'NesterovAG', 'NesterovAGRule', 'Optimizer', 'RMSprop',
    'RMSpropRule', 'SGDRule', 'UpdateRule', 'WeightDecay',
]
