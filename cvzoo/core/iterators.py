"""Chainer's ``chainer.iterators`` under its own name: ``from cvzoo.core import iterators``.

The iterators live in :mod:`cvzoo.core.training.iterators`; this module names the same
classes, so a Chainer guide's ``iterators.SerialIterator(...)`` runs as written.

>>> from cvzoo.core import iterators, training
>>> iterators.SerialIterator is training.iterators.SerialIterator
True
>>> iterators.SerialIterator(list(range(5)), 2, repeat=False, shuffle=False).next()
[0, 1]
"""

from cvzoo.core.training.iterators import MultiprocessIterator, SerialIterator

__all__ = ['MultiprocessIterator', 'SerialIterator']
