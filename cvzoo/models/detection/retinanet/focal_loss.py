"""The focal loss of RetinaNet (Lin et al., ICCV 2017, section 3.2, eq. 5)."""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import variable

IGNORE_LABEL = -1


def sigmoid_focal_loss(x, t, alpha=0.25, gamma=2.0, reduce='sum'):
    """Focal loss of sigmoid scores: ``-alpha_t (1 - p_t) ** gamma log(p_t)`` per element.

    With ``p = sigmoid(x)``: ``p_t = p`` and ``alpha_t = alpha`` where t is 1,
    ``p_t = 1 - p`` and ``alpha_t = 1 - alpha`` where t is 0 (torchvision's
    ``sigmoid_focal_loss``). ``log(p_t)`` is the stable sigmoid cross entropy; elements
    labelled -1 (``IGNORE_LABEL``) give 0. Composed of differentiable functions, so it
    supports double backprop. gamma = 0 and alpha = 0.5 give half the cross entropy.

    Args:
        x (Variable or array): float logits of any shape.
        t (array): int32 labels of x's shape: 1, 0 or -1 (ignored).
        alpha (float): weight of the positives, in [0, 1]; the negatives get 1 - alpha.
        gamma (float): focusing exponent >= 0.
        reduce (str): ``'sum'`` (a 0-d Variable) or ``'no'`` (x's shape).

    Returns:
        Variable: the loss, x's dtype.

    Raises:
        ValueError: alpha, gamma or reduce out of range; shapes differ.
        TypeError: t is not an integer array.

    >>> x = numpy.array([0.0, 2.0], numpy.float32)
    >>> round(float(sigmoid_focal_loss(x, numpy.array([1, -1], numpy.int32)).array), 6)
    0.043322
    """
    if reduce not in ('sum', 'no'):
        raise ValueError(f"reduce: expected 'sum' or 'no', got {reduce!r}")
    if not 0 <= alpha <= 1:
        raise ValueError(f'alpha: expected a number in [0, 1], got {alpha!r}')
    if gamma < 0:
        raise ValueError(f'gamma: expected a number >= 0, got {gamma!r}')
    t = variable.as_array(t)
    if numpy.dtype(t.dtype).kind not in 'iu':
        raise TypeError(f't: expected an integer array of labels, got {t.dtype}')
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f't: expected the shape of x {tuple(x.shape)}, got {tuple(t.shape)}')
    dtype = x.dtype.type
    cross_entropy = F.sigmoid_cross_entropy(x, t, reduce='no')
    positive = (t == 1).astype(x.dtype)
    p = F.sigmoid(x)
    # NOTE: 1 - p_t is p for negatives and 1 - p for positives.
    miss = p + (1 - 2 * p) * positive  # the Variable first, so its operator runs
    alpha_t = positive * dtype(2 * alpha - 1) + dtype(1 - alpha)
    loss = cross_entropy * miss ** gamma * alpha_t if gamma else cross_entropy * alpha_t
    return F.sum(loss) if reduce == 'sum' else loss
