"""The training loop: iterators, updaters, the Trainer and its extensions.

The names are Chainer's, so its guides read as they are:

>>> from cvzoo.core import training
>>> from cvzoo.core.training import extensions
>>> training.Trainer is training.trainer.Trainer
True
>>> training.updaters.StandardUpdater is training.StandardUpdater
True
>>> training.iterators.SerialIterator([1, 2, 3], 2, shuffle=False).next()
[1, 2]
>>> training.triggers.IntervalTrigger(2, 'epoch').get_training_length()
(2, 'epoch')
"""

from cvzoo.core.training import extensions, iterators, triggers, updaters
from cvzoo.core.training.convert import concat_examples
from cvzoo.core.training.extension import (
    PRIORITY_EDITOR,
    PRIORITY_READER,
    PRIORITY_WRITER,
    Extension,
    make_extension,
)
from cvzoo.core.training.recipe import TrainingRecipe
from cvzoo.core.training.reporter import DictSummary, Reporter, Summary, report
from cvzoo.core.training.trainer import Trainer
from cvzoo.core.training.triggers import IntervalTrigger, get_trigger
from cvzoo.core.training.updaters import ParallelUpdater, StandardUpdater

__all__ = [
    'PRIORITY_EDITOR', 'PRIORITY_READER', 'PRIORITY_WRITER', 'DictSummary', 'Extension',
    'IntervalTrigger', 'ParallelUpdater', 'Reporter', 'StandardUpdater', 'Summary', 'Trainer',
    'TrainingRecipe',
    'concat_examples', 'extensions', 'get_trigger', 'iterators', 'make_extension', 'report',
    'triggers', 'updaters',
]
