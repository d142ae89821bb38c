"""Dataset iterators, by Chainer's names: ``training.iterators.SerialIterator``."""

from cvzoo.core.training.iterators.multiprocess_iterator import MultiprocessIterator
from cvzoo.core.training.iterators.serial_iterator import SerialIterator

__all__ = ['MultiprocessIterator', 'SerialIterator']
