"""BatchNormalization: batch statistics in training, running averages in test mode."""

import numbers

import numpy

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.config import config
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter, Variable


class BatchNormalization(link.Link):
    """Batch normalisation layer (Ioffe and Szegedy, ICML 2015).

    In training mode (``config.train``) it normalises with the batch's statistics and
    updates the running averages ``avg_mean`` / ``avg_var`` (unbiased variance) in place:
    ``avg = decay * avg + (1 - decay) * batch``. In test mode it uses the averages.

    Args:
        size (int, tuple or None): the parameter shape, (C,) for NCHW input; None infers
            it from the first input.
        decay (float): weight of the old running average.
        eps (float): added to the variance.
        dtype: dtype of the parameters and averages.
        use_gamma, use_beta (bool): learn the scale / the shift (else 1 / 0).
        initial_gamma, initial_beta: initializers (default 1 and 0).
        axis (None, int or tuple): axes to normalise over; None is axis 0 and the axes
            after the parameter's ((0, 2, 3) for NCHW).
        initial_avg_mean, initial_avg_var: initial running averages (default 0 and 1).

    Attributes:
        gamma, beta (Parameter): scale and shift.
        avg_mean, avg_var (array): persistent running averages.
        N (int): persistent count of fine-tuning batches.
    """

    def __init__(self, size=None, decay=0.9, eps=2e-5, dtype=numpy.float32, use_gamma=True,
                 use_beta=True, initial_gamma=None, initial_beta=None, axis=None,
                 initial_avg_mean=None, initial_avg_var=None):
        super().__init__()
        if not isinstance(decay, numbers.Real) or not 0 <= decay <= 1:
            raise ValueError(f'decay: expected a number in [0, 1], got {decay!r}')
        self.decay, self.eps, self.axis = decay, eps, axis
        self.dtype = numpy.dtype(dtype)
        self._initial_avg = (0.0 if initial_avg_mean is None else initial_avg_mean,
                             1.0 if initial_avg_var is None else initial_avg_var)
        self.add_persistent('avg_mean', None)
        self.add_persistent('avg_var', None)
        self.add_persistent('N', 0)
        with self.init_scope():
            if use_gamma:
                default = initializers.One(dtype=self.dtype)
                self.gamma = Parameter(default if initial_gamma is None else initial_gamma)
            if use_beta:
                default = initializers.Zero(dtype=self.dtype)
                self.beta = Parameter(default if initial_beta is None else initial_beta)
        if size is not None:
            self._initialize_params((size,) if isinstance(size, numbers.Integral) else size)

    def _initialize_params(self, shape):
        shape = tuple(int(n) for n in shape)
        mean, var = (initializers.Constant(v) if hasattr(v, 'shape') else v
                     for v in self._initial_avg)
        self.avg_mean = initializers.generate_array(mean, shape, self.device, self.dtype)
        self.avg_var = initializers.generate_array(var, shape, self.device, self.dtype)
        for name in ('gamma', 'beta'):
            param = getattr(self, name, None)
            if param is not None and param.array is None:
                param.initialize(shape)

    def _param_shape(self, x):
        if self.axis is None:
            return (x.shape[1],)
        axes = (self.axis,) if isinstance(self.axis, int) else self.axis
        axes = [a % x.ndim for a in axes]
        return tuple(n for i, n in enumerate(x.shape) if i not in axes)

    def _scale_and_shift(self):
        gamma, beta = getattr(self, 'gamma', None), getattr(self, 'beta', None)
        xp = self.xp
        if gamma is None:
            gamma = Variable(xp.ones_like(self.avg_mean), requires_grad=False)
        if beta is None:
            beta = Variable(xp.zeros_like(self.avg_mean), requires_grad=False)
        return gamma, beta

    def forward(self, x, finetune=False):
        """Normalise ``x``; with ``finetune`` the averages become exact means over batches."""
        if self.avg_mean is None:
            self._initialize_params(self._param_shape(x))
        gamma, beta = self._scale_and_shift()
        if not config.train:
            return F.fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                               self.eps, axis=self.axis)
        decay = self.decay
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        return F.batch_normalization(x, gamma, beta, self.eps, self.avg_mean, self.avg_var,
                                     decay, axis=self.axis)

    def start_finetuning(self):
        """Reset the batch count used by ``forward(x, finetune=True)``."""
        self.N = 0

    def _repr_args(self):
        size = None if self.avg_mean is None else tuple(self.avg_mean.shape)
        return f'size={size}, decay={self.decay}, eps={self.eps}'
