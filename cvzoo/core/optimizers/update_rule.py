"""UpdateRule: how one parameter is updated from its gradient, with its own state."""

from cvzoo.core import backend
from cvzoo.core.optimizers import hyperparameter as hyperparameter_module
from cvzoo.core.serializers import serializer as serializer_module


class UpdateRule:
    """Update one parameter in place; subclasses write ``init_state`` and ``update_core``.

    The state (e.g. momentum) is a dict of arrays shaped like the parameter, named by
    ``state_names()`` and created as zeros at the first update; ``to_device`` moves it
    with the parameter.

    Args:
        parent_hyperparam (Hyperparameter): the optimizer's hyperparameters.

    Attributes:
        hyperparam (Hyperparameter): this rule's (falls back to the optimizer's).
        state (dict or None): arrays of the rule.
        t (int): number of updates done by this rule.
        enabled (bool): False skips the parameter (frozen).
    """

    def __init__(self, parent_hyperparam=None):
        self.hyperparam = hyperparameter_module.Hyperparameter(parent_hyperparam)
        self.state = None
        self.t = 0
        self.enabled = True

    def state_names(self):
        """Names of the state arrays (each shaped like the parameter); default: none."""
        return ()

    def init_state(self, param):
        """Fill ``self.state`` (an empty dict) with zeros for every name of state_names()."""
        xp = param.xp
        for name in self.state_names():
            self.state[name] = xp.zeros_like(param.array)

    def update_core(self, param):
        """Update ``param.array`` in place from ``param.grad``; subclasses implement it."""
        raise NotImplementedError(f'{type(self).__name__} does not implement update_core')

    def update(self, param):
        """Update ``param`` unless the rule is disabled or the gradient is None."""
        if not self.enabled or param.grad is None or param.array is None:
            return
        with backend.using_device_of(param.array):
            if self.state is None:
                self.state = {}
                self.init_state(param)
            self.t += 1
            self.update_core(param)

    def to_device(self, device):
        """Move the state arrays to ``device`` in place."""
        if self.state is not None:
            for key, value in self.state.items():
                self.state[key] = backend.to_device(value, device)

    def serialize(self, serializer, param=None):
        """Save or load ``t`` and the state arrays."""
        self.t = serializer('t', self.t)
        if self.state is not None:
            for key in list(self.state):
                self.state[key] = serializer(key, self.state[key])
            return
        if not isinstance(serializer, serializer_module.Deserializer) or param is None:
            return
        loaded = {key: serializer(key, None) for key in self.state_names()}
        if loaded and all(value is not None for value in loaded.values()):
            device = param.device
            self.state = {key: backend.to_device(v, device) for key, v in loaded.items()}
