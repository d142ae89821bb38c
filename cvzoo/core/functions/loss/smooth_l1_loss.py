"""smooth_l1_loss: the box-regression loss of Fast R-CNN."""

import numbers

from cvzoo.core.functions.loss import huber_loss as huber_loss_module


def smooth_l1_loss(x, t, beta=1.0, reduce='no'):
    """Smooth L1 loss (Girshick, Fast R-CNN, ICCV 2015, eq. 3), elementwise.

    ``l(d) = 0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, with
    ``d = x - t``; that is ``huber_loss(x, t, beta) / beta``. With beta = 1 it is the
    Huber loss with delta = 1. Supports double backprop.

    Args:
        x, t (Variable or array): float arrays of one shape and dtype.
        beta (float): the positive switch point.
        reduce (str): as in huber_loss: ``'no'`` or ``'sum_along_second_axis'``.

    Returns:
        Variable: the loss, shaped as huber_loss returns it.

    Raises:
        ValueError: as huber_loss.
    """
    if not isinstance(beta, numbers.Real) or beta <= 0:
        raise ValueError(f'smooth_l1_loss: beta must be a positive number, got {beta!r}')
    return huber_loss_module.huber_loss(x, t, beta, reduce=reduce) * (1.0 / beta)
