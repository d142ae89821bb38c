"""Optimizer: updates every parameter of a Link tree through per-parameter UpdateRules."""

import collections

from cvzoo.core.optimizers import hyperparameter as hyperparameter_module
from cvzoo.core.optimizers import multi_tensor as multi_tensor_module

_TIMINGS = ('pre', 'post')


class Optimizer:
    """Base of the optimizers: setup(link), then update() after each backward.

    Hyperparameters (``lr``, ``momentum``, ...) are read and assigned as attributes,
    ``optimizer.lr = 0.01``; each parameter's rule sees the new value unless it
    overrides it in ``param.update_rule.hyperparam``. Every value is checked when it is
    assigned, in the constructor or later by a schedule: NaN, inf and negative values
    (and decay factors above 1, the names in ``unit_interval``) raise a
    :class:`~cvzoo.errors.UsageError` naming the hyperparameter.

    Attributes:
        target (Link): the link being optimised.
        t (int): number of update() calls that updated the parameters.
        epoch (int): number of new_epoch() calls.
        hyperparam (Hyperparameter): the shared hyperparameters.
        loss_scaler (LossScaler or None): dynamic loss scaling for float16 training
            (``cvzoo.core.optimizers.LossScaler``); None (the default) scales nothing.
        multi_tensor (bool): update the parameters that can be updated alike all at once
            (see ``cvzoo.core.optimizers.multi_tensor``); True by default for the
            optimizers whose rule has ``update_arrays`` (SGD, MomentumSGD, Adam, AdamW;
            turned to False at the first update of the others). False updates each
            parameter on its own.
    """

    unit_interval = hyperparameter_module.UNIT_INTERVAL

    def __init__(self):
        object.__setattr__(self, 'hyperparam', hyperparameter_module.Hyperparameter(
            unit_interval=self.unit_interval))
        self.target = None
        self.t = 0
        self.epoch = 0
        self.loss_scaler = None
        self.multi_tensor = True
        self._hooks = collections.OrderedDict()
        self._multi_tensor_update = None

    def __getattr__(self, name):
        hyperparam = self.__dict__.get('hyperparam')
        if hyperparam is not None and name in hyperparam.__dict__:
            return hyperparam.__dict__[name]
        raise AttributeError(f'{type(self).__name__} has no attribute {name!r}')

    def __setattr__(self, name, value):
        hyperparam = self.__dict__.get('hyperparam')
        if hyperparam is not None and name in hyperparam.__dict__:
            setattr(hyperparam, name, value)
        else:
            super().__setattr__(name, value)

    def create_update_rule(self):
        """Return a new UpdateRule for one parameter; subclasses implement it."""
        raise NotImplementedError(f'{type(self).__name__} does not implement create_update_rule')

    def setup(self, link):
        """Attach the optimizer to ``link``: give each of its parameters an update rule.

        Returns:
            Optimizer: self.
        """
        self.target = link
        self.t = 0
        self.epoch = 0
        self._multi_tensor_update = None
        for param in link.params():
            param.update_rule = self.create_update_rule()
        return self

    def _check_setup(self):
        if self.target is None:
            raise RuntimeError(f'{type(self).__name__}: call setup(link) before using it')

    def update(self, lossfun=None, *args, **kwargs):
        """Update every parameter from its gradient.

        With a ``loss_scaler``, the gradients are first divided by its scale; when one
        of them holds an inf or NaN nothing is updated, no hook runs, and the scaler
        lowers its scale (see LossScaler).

        Args:
            lossfun: when given, the optimizer clears the gradients, computes
                ``loss = lossfun(*args, **kwargs)`` and runs backward from
                ``scale_loss(loss)`` first.
        """
        self._check_setup()
        if lossfun is not None:
            self.target.cleargrads()
            loss = lossfun(*args, **kwargs)
            self.scale_loss(loss).backward()
            del loss
        if self.loss_scaler is not None:
            finite = self.loss_scaler.unscale(self.target)
            self.loss_scaler.update(finite)
            if not finite:
                return
        multi_tensor = self._multi_tensor()
        if multi_tensor is not None:
            multi_tensor.update(self)
        else:
            self.call_hooks('pre')
            self.t += 1
            for param in self.target.params():
                if param.update_rule is None:
                    param.update_rule = self.create_update_rule()
                param.update_rule.update(param)
        self.call_hooks('post')

    def _multi_tensor(self):
        """The MultiTensorUpdate of this optimizer, or None where it updates per parameter."""
        if not self.multi_tensor:
            return None
        if self._multi_tensor_update is None:
            rule_class = type(self.create_update_rule())
            if not multi_tensor_module.supports(rule_class):
                self.multi_tensor = False
                return None
            self._multi_tensor_update = multi_tensor_module.MultiTensorUpdate(rule_class)
        return self._multi_tensor_update

    def scale_loss(self, loss):
        """``loss`` multiplied by the loss scaler's scale (``loss`` itself without one):
        what to run backward from before ``update()``."""
        return loss if self.loss_scaler is None else self.loss_scaler.scale(loss)

    def new_epoch(self):
        """Count one more epoch (called by the training loop)."""
        self.epoch += 1

    def add_hook(self, hook, name=None, timing=None):
        """Add ``hook(optimizer)``, called before ('pre') or after ('post') each update.

        Args:
            hook: a callable taking the optimizer.
            name (str): its name (default: ``hook.name`` or the class name).
            timing (str): 'pre' or 'post'; default ``hook.timing``, else 'pre'.
        """
        name = name or getattr(hook, 'name', None) or type(hook).__name__
        timing = timing or getattr(hook, 'timing', 'pre')
        if timing not in _TIMINGS:
            raise ValueError(f"timing: expected 'pre' or 'post', got {timing!r}")
        if name in self._hooks:
            raise KeyError(f'hook {name!r} already exists')
        self._hooks[name] = (hook, timing)

    def remove_hook(self, name):
        """Remove the hook called ``name``."""
        del self._hooks[name]

    def call_hooks(self, timing='pre'):
        """Call the hooks of ``timing`` in the order they were added."""
        for hook, hook_timing in list(self._hooks.values()):
            if hook_timing == timing:
                hook(self)

    def serialize(self, serializer):
        """Save or load ``t``, ``epoch``, the loss scaler's state and every parameter's
        rule state by path."""
        self.t = serializer('t', self.t)
        self.epoch = serializer('epoch', self.epoch)
        if self.loss_scaler is not None:
            self.loss_scaler.serialize(serializer['loss_scaler'])
        if self.target is None:
            return
        for path, param in self.target.namedparams():
            if param.update_rule is not None:
                param.update_rule.serialize(serializer[path[1:]], param)
