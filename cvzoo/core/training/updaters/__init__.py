"""Updaters, by Chainer's names: ``training.updaters.StandardUpdater``."""

from cvzoo.core.training.updaters.parallel_updater import ParallelUpdater
from cvzoo.core.training.updaters.standard_updater import StandardUpdater

__all__ = ['ParallelUpdater', 'StandardUpdater']
