"""Optimizers and their update rules: ``from cvzoo.core import optimizers``.

>>> import numpy as np
>>> from cvzoo.core.links.link import Link
>>> link = Link()
>>> link.add_param('W', initializer=np.array([1.0, 2.0], dtype=np.float32))
>>> optimizer = MomentumSGD(lr=0.1).setup(link)
>>> optimizer.add_hook(WeightDecay(0.5))
>>> link.W.grad = np.array([1.0, 0.0], dtype=np.float32)
>>> optimizer.update()
>>> link.W.array
array([0.85, 1.9 ], dtype=float32)
"""

from cvzoo.core.optimizers.adam import Adam, AdamRule, AdamW
from cvzoo.core.optimizers.hooks import GradientClipping, GradientLARS, WeightDecay
from cvzoo.core.optimizers.hyperparameter import Hyperparameter
from cvzoo.core.optimizers.loss_scaler import LossScaler
from cvzoo.core.optimizers.momentum_sgd import MomentumSGD, MomentumSGDRule
from cvzoo.core.optimizers.nesterov_ag import NesterovAG, NesterovAGRule
from cvzoo.core.optimizers.optimizer import Optimizer
from cvzoo.core.optimizers.rmsprop import RMSprop, RMSpropRule
from cvzoo.core.optimizers.sgd import SGD, SGDRule
from cvzoo.core.optimizers.update_rule import UpdateRule

__all__ = [
    'SGD', 'Adam', 'AdamRule', 'AdamW', 'GradientClipping', 'GradientLARS', 'Hyperparameter',
    'LossScaler', 'MomentumSGD', 'MomentumSGDRule', 'NesterovAG', 'NesterovAGRule',
    'Optimizer', 'RMSprop', 'RMSpropRule', 'SGDRule', 'UpdateRule', 'WeightDecay',
]
