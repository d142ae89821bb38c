"""The optimizer update of all parameters at once (a multi-tensor update).

PyTorch's ``foreach``/``fused`` optimizers update a list of tensors in one call. Here the
parameters an optimizer updates alike (the same update rule class, dtype, device and update
count, no hyperparameter of their own, enabled, with a gradient of their dtype) form a
group, and each group's parameters and optimizer state are views into one flat buffer per
array (``param.array`` and ``rule.state['v']`` become views of it at the group's first
update, their values copied). A step then gathers the group's gradients into its flat
gradient buffer (one ``concatenate``), adds the folded weight decay (one expression) and
runs the rule's update once on the flat arrays (``UpdateRule.update_arrays``: MomentumSGD's
and Adam's fused kernel on a GPU, the same NumPy expression as a single parameter's on the
CPU): a handful of array calls and kernels per group instead of a dozen Python calls and a
few kernels per parameter.

Flat buffers rather than a kernel over pointer tables: the update stays the rule's own code
(one home, and the CPU's NumPy twin is the very same expression, so the result is equal bit
for bit to the per-parameter path), CUDA graphs capture it like any other kernel, and a
pointer-table kernel would need its own raw CUDA source and stand-in. The price is one copy
of the gradients per step (the gather), a gradient-sized buffer per group, and the views:
measured on ResNet-50 (batch 1, 32 x 32, bench/count_step_calls.py) the update went from
6,042 Python calls and 483 kernel launches to 1,421 calls and 4 launches; on the CPU its
time (with WeightDecay, 2 cores) from 79 to 74 ms.

What keeps the per-parameter path (``UpdateRule.update``), each step anew:

- a rule that is disabled, of another class, or has hyperparameters of its own
  (``param.update_rule.hyperparam.lr = ...``), a parameter without gradient or array (lazy,
  not yet initialised), a gradient of another dtype, a dtype that is not floating point;
- everything, when ``optimizer.multi_tensor`` is False.

A group is rebuilt (its members copied into new buffers) whenever its members change, or
when one of their arrays or state arrays was replaced (a snapshot loaded by replacement,
``to_device``, ``param.array = ...``); a parameter that leaves a group gets arrays of its own
again. Pre-update hooks run as they do per parameter, except the ``WeightDecay`` hooks that
come after every other pre-update hook: those are folded into the gathered gradient, so the
decay term reaches the update but not ``param.grad`` (as in PyTorch's optimizers).
"""

import operator

import numpy

from cvzoo.core import backend
from cvzoo.core.optimizers import hooks as hooks_module
from cvzoo.core.optimizers import hyperparameter as hyperparameter_module
from cvzoo.core.optimizers import update_rule

# On the CPU the flat arrays are updated in pieces of this many elements (8 MB of float32):
# the update's NumPy temporaries then stay below glibc's mmap threshold and are reused
# instead of being mapped and faulted in afresh at every step (a GPU updates them whole).
CPU_PIECE = 1 << 21

_ARRAY = operator.attrgetter('array')
_STATE = operator.attrgetter('state')
_T = operator.attrgetter('t')


class _Group:
    """Parameters updated as one: flat parameter, state and gradient buffers they view."""

    def __init__(self, params, positions):
        self.params = params
        self.positions = positions  # of the members among the step's grouped parameters
        self.rules = [param.update_rule for param in params]
        self.t = self.rules[0].t
        first = params[0].array
        self.xp = backend.get_array_module(first)
        with backend.using_device_of(first):
            for param, rule in zip(params, self.rules):
                if rule.state is None:
                    rule.state = {}
                    rule.init_state(param)
            self.array, self.views = self._flatten(list(map(_ARRAY, params)))
            self.state, self.state_views = {}, {}
            for name in self.rules[0].state:
                states = [rule.state[name] for rule in self.rules]
                self.state[name], self.state_views[name] = self._flatten(states)
            self.grad = self.xp.empty_like(self.array)
            self.pieces = self._pieces()
        for param, view in zip(params, self.views):
            param.array = view
        for name, views in self.state_views.items():
            for rule, view in zip(self.rules, views):
                rule.state[name] = view

    def _flatten(self, arrays):
        """One flat copy of ``arrays`` and a view of it shaped like each."""
        flat = self.xp.concatenate([array.reshape(-1) for array in arrays])
        views, offset = [], 0
        for array in arrays:
            views.append(flat[offset:offset + array.size].reshape(array.shape))
            offset += array.size
        return flat, views

    def _pieces(self):
        """(gradient, parameter, state) views the update runs on, in order."""
        step = self.array.size if self.xp is not numpy else CPU_PIECE
        return [(self.grad[start:start + step], self.array[start:start + step],
                 {name: flat[start:start + step] for name, flat in self.state.items()})
                for start in range(0, self.array.size, step)]

    def intact(self):
        """Whether every member still holds its views and the group's update count."""
        if not all(map(operator.is_, map(_ARRAY, self.params), self.views)):
            return False
        states = list(map(_STATE, self.rules))
        for name, views in self.state_views.items():
            if not all(map(operator.is_, map(operator.itemgetter(name), states), views)):
                return False
        return all(map(operator.eq, map(_T, self.rules), [self.t] * len(self.rules)))

    def release(self, keep):
        """Give each member not in ``keep`` (ids) arrays of its own again."""
        with backend.using_device_of(self.array):
            self._release(keep)

    def _release(self, keep):
        for param, view in zip(self.params, self.views):
            if id(param) not in keep and param.array is view:
                param.array = view.copy()
        for name, views in self.state_views.items():
            for param, rule, view in zip(self.params, self.rules, views):
                if id(param) not in keep and rule.state is not None \
                        and rule.state.get(name) is view:
                    rule.state[name] = view.copy()

    def update(self, grads, decays):
        """Gather the gradients (``grads`` of the step's grouped parameters), add the folded
        weight decays, run the rule's update."""
        with backend.using_device_of(self.array):
            self.xp.concatenate([grads[i].reshape(-1) for i in self.positions], out=self.grad)
            self.t += 1
            for rule in self.rules:
                rule.t += 1
            update_arrays = self.rules[0].update_arrays
            for grad, array, state in self.pieces:
                for decay in decays:
                    decay.decay_arrays(grad, array)
                update_arrays(grad, array, state)


class MultiTensorUpdate:
    """The groups of one optimizer, kept from step to step; ``update(optimizer)`` runs the
    pre-update hooks, counts ``optimizer.t`` and updates every parameter."""

    def __init__(self, rule_class):
        self.rule_class = rule_class
        self.groups = []
        self._ids = []

    def update(self, optimizer):
        """One update of ``optimizer``'s parameters (what ``Optimizer.update`` does after the
        loss scaler and before the post-update hooks)."""
        decays = _folded_decays(optimizer)
        for hook, timing in list(optimizer._hooks.values()):
            if timing == 'pre' and hook not in decays:
                hook(optimizer)
        optimizer.t += 1
        grouped, grads, others = self._partition(optimizer)
        self._refresh(grouped)
        for param in others:
            if decays and param.grad is not None and param.array is not None:
                with backend.using_device_of(param.array):
                    for decay in decays:
                        decay.decay_arrays(param.grad, param.array)
            param.update_rule.update(param)
        for group in self.groups:
            group.update(grads, decays)

    def _partition(self, optimizer):
        """The parameters a group can update (in order), their gradients, and the others."""
        parent = optimizer.hyperparam
        bare = {'_parent': parent, '_unit_interval': parent.unit_interval}  # no own value
        grouped, grads, others = [], [], []
        for param in optimizer.target.params():
            rule = param.update_rule
            if rule is None:
                rule = param.update_rule = optimizer.create_update_rule()
            hyperparam = rule.hyperparam
            if hyperparam.__class__ is not hyperparameter_module.Hyperparameter:
                hyperparam = hyperparam._real  # the device view of a captured step
            grad, array = param.grad, param.array
            dtype = None if array is None else array.dtype
            if (rule.__class__ is self.rule_class and rule.enabled and grad is not None
                    and dtype is not None and grad.dtype == dtype
                    and dtype.kind == 'f' and hyperparam.__dict__ == bare):
                grouped.append(param)
                grads.append(grad)
            else:
                others.append(param)
        return grouped, grads, others

    def _refresh(self, grouped):
        """Rebuild the groups unless ``grouped`` are the members they hold, intact."""
        ids = list(map(id, grouped))
        if ids == self._ids and all(group.intact() for group in self.groups):
            return
        keep = set(ids)
        for group in self.groups:
            group.release(keep)
        self.groups = [_Group([grouped[i] for i in positions], positions)
                       for positions in _by_key(grouped)]
        self._ids = ids


def supports(rule_class):
    """Whether ``rule_class`` updates a parameter through its ``update_arrays`` alone (a
    subclass that redefines ``update_core`` or ``update`` but not ``update_arrays`` does not)."""
    owner = next((cls for cls in rule_class.__mro__ if 'update_core' in vars(cls)), None)
    return (owner is not None and 'update_arrays' in vars(owner)
            and rule_class.update is update_rule.UpdateRule.update)


def _by_key(params):
    """The positions in ``params`` of each group: split by dtype, device and update count."""
    groups = {}
    for position, param in enumerate(params):
        array = param.array
        key = (numpy.dtype(array.dtype), backend.get_device_from_array(array).name,
               param.update_rule.t)
        groups.setdefault(key, []).append(position)
    return list(groups.values())


def _folded_decays(optimizer):
    """The WeightDecay pre-update hooks that come after every other pre-update hook."""
    decays = []
    for hook, timing in reversed(list(optimizer._hooks.values())):
        if timing != 'pre':
            continue
        if type(hook) is not hooks_module.WeightDecay:
            break
        decays.insert(0, hook)
    return decays
