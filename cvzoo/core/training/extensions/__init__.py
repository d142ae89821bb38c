"""Trainer extensions, by Chainer's names: ``from cvzoo.core.training import extensions``.

>>> from cvzoo.core.training import extensions
>>> extensions.ExponentialShift('lr', 0.5).attr
'lr'
>>> extensions.snapshot(n_retains=2).trigger
(1, 'epoch')
"""

from cvzoo.core.training.extensions.cosine_shift import CosineShift
from cvzoo.core.training.extensions.evaluator import Evaluator
from cvzoo.core.training.extensions.exponential_shift import ExponentialShift
from cvzoo.core.training.extensions.fail_on_non_number import FailOnNonNumber, NonFiniteError
from cvzoo.core.training.extensions.linear_shift import LinearShift
from cvzoo.core.training.extensions.log_report import LogReport, read_log
from cvzoo.core.training.extensions.multistep_shift import MultistepShift
from cvzoo.core.training.extensions.plot_report import PlotReport
from cvzoo.core.training.extensions.polynomial_shift import PolynomialShift
from cvzoo.core.training.extensions.print_report import PrintReport
from cvzoo.core.training.extensions.progress_bar import ProgressBar
from cvzoo.core.training.extensions.snapshots import snapshot, snapshot_object
from cvzoo.core.training.extensions.step_shift import StepShift
from cvzoo.core.training.extensions.value_observation import observe_lr, observe_value
from cvzoo.core.training.extensions.value_shift import ValueShift
from cvzoo.core.training.extensions.warmup_shift import WarmupShift

__all__ = [
    'CosineShift', 'Evaluator', 'ExponentialShift', 'FailOnNonNumber', 'LinearShift',
    'LogReport', 'MultistepShift', 'NonFiniteError', 'PlotReport', 'PolynomialShift',
    'PrintReport',
    'ProgressBar', 'StepShift', 'ValueShift', 'WarmupShift', 'observe_lr', 'observe_value',
    'read_log', 'snapshot', 'snapshot_object',
]
