"""Training any registered model through its family's recipe: ``cvzoo.training.train``.

>>> from cvzoo.training import train, TrainingResult
>>> train.__module__
'cvzoo.training.train'
"""

from cvzoo.training.train import TrainingResult, train

__all__ = ['TrainingResult', 'train']
