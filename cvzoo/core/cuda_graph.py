"""Whole training steps as CUDA graphs: captured once after warm-up, replayed each iteration.

``GraphedUpdate(optimizer, loss_func)`` is called as ``optimizer.update(loss_func, *batch)``
is (PyTorch's ``torch.cuda.graph`` with ``make_graphed_callables``' warm-up). Its first
``warmup`` calls run eagerly (lazily shaped parameters, optimizer state, the memory pool).
The next one captures ``optimizer.update(loss_func, *static_inputs)`` (forward, backward,
optimizer hooks and update) on a side stream, into a memory pool private to the graph,
and every call from then on copies the batch into the static inputs on the device and
launches the graph: one launch instead of thousands of kernels queued from Python. The
gradient all-reduce of a multi-node optimizer (NCCL, on the current stream) is captured
with the step, so each replay averages over the ranks (its first-step broadcast runs in
the warm-up).

What a replay cannot run, the step reads from the device:

- hyperparameters: while the step is captured each update rule reads its numeric
  hyperparameters (``lr``, ``momentum``, Adam's ``alpha``, ``beta1``... and Adam's
  bias-corrected step as ``bias_corrected_lr``) as 0-d device arrays, views of one vector
  per dtype that the host fills before each launch from the Python values, so a schedule
  (``ExponentialShift``...) that assigns ``optimizer.lr`` needs no new capture;
- randomness: dropout draws from :mod:`cvzoo.core.device_random`, whose counter the graph
  advances, so each replay draws a new mask (the same as an eager run from the same seed);
- host counters (``optimizer.t``, each rule's ``t``) are counted on the host after each
  launch, and the values the captured step reported (``main/loss``...) are reported again.

Inference too: :class:`GraphedForward` runs a network's forward as one graph per input
shape (``predict(..., cuda_graph=True)`` of classifiers, segmenters and one-stage
detectors, through ``cvzoo.models.common.network_runtime``).

A step the capture refuses (a host synchronisation, a shape that depends on the data,
host-side randomness, a host-to-device copy: CUDA's rules, which the CuPy stand-in keeps;
or new parameter arrays instead of in-place updates) raises
:class:`cvzoo.errors.GraphCaptureError` naming the operation and its call site;
``GraphedUpdate`` then warns once, puts back the arrays of before, and goes on eagerly. A
batch whose shapes or dtypes differ from the captured one (a shorter last batch) runs
eagerly; parameters or optimizer state replaced by new arrays (a snapshot loaded) make it
run one step eagerly and capture again at the next.
"""

import numbers
import warnings

import numpy

from cvzoo import errors
from cvzoo.core import backend

DEFAULT_WARMUP = 3


def _cupy():
    return backend._import_cupy()


def _is_device_array(x):
    cupy = backend._cupy_if_loaded()
    return cupy is not None and isinstance(x, cupy.ndarray)


class _DeviceHyperparameters:
    """What an update rule reads as ``rule.hyperparam`` while its update is captured:
    numbers as 0-d device views of the slot vector, other values (``amsgrad``) as they are."""

    def __init__(self, real, views):
        object.__setattr__(self, '_real', real)
        object.__setattr__(self, '_views', views)

    def __getattr__(self, name):
        if name in self._views:
            return self._views[name]
        return getattr(self._real, name)

    def __setattr__(self, name, value):
        raise errors.GraphCaptureError(
            f'hyperparameter {name!r} assigned inside a captured training step')


def _defining(hyperparam, name):
    """The Hyperparameter (this one or a parent) whose own value of ``name`` is seen."""
    while hyperparam is not None and name not in hyperparam.__dict__:
        hyperparam = hyperparam.parent
    return hyperparam


def _has_bias_correction(rule):
    return isinstance(getattr(type(rule), 'lr', None), property)


class _HyperparameterSlots:
    """The numeric hyperparameters of every update rule, one slot each in a device vector
    per parameter dtype (rules sharing the optimizer's value share its slot)."""

    def __init__(self, params, device):
        self._entries = {}   # dtype -> [(kind, owner, name)]
        self._index = {}     # (dtype, kind, id(owner), name) -> slot
        self.views = {}      # id(rule) -> {name: 0-d device view}
        for param in params:
            rule = param.update_rule
            dtype = numpy.dtype(param.array.dtype)
            names = {name: value for name, value in rule.hyperparam.get_dict().items()
                     if isinstance(value, numbers.Real) and not isinstance(value, bool)}
            slots = {name: self._slot(dtype, 'value', _defining(rule.hyperparam, name), name)
                     for name in names}
            if _has_bias_correction(rule):
                slots['bias_corrected_lr'] = self._slot(dtype, 'derived', rule, 'lr')
            self.views[id(rule)] = slots
        with backend.get_device(device):
            self.vectors = {dtype: _cupy().zeros(len(entries), dtype=dtype)
                            for dtype, entries in self._entries.items()}

    def _slot(self, dtype, kind, owner, name):
        key = (dtype, kind, id(owner), name)
        if key not in self._index:
            entries = self._entries.setdefault(dtype, [])
            self._index[key] = (dtype, len(entries))
            entries.append((kind, owner, name))
        return self._index[key]

    def device_views(self, rule):
        """{name: 0-d view} of ``rule``'s slots (taken while the capture records them)."""
        return {name: self.vectors[dtype][index]
                for name, (dtype, index) in self.views[id(rule)].items()}

    def write(self):
        """Fill the vectors with the values the next update reads (one copy per dtype)."""
        for dtype, entries in self._entries.items():
            values = numpy.array([_value_of(*entry) for entry in entries], dtype=dtype)
            self.vectors[dtype].set(values)


def _value_of(kind, owner, name):
    if kind == 'value':
        return owner.__dict__[name]
    owner.t += 1  # the bias-corrected step of the update about to run
    try:
        return getattr(owner, name)
    finally:
        owner.t -= 1


def _current_observation():
    from cvzoo.core.training import reporter

    stack = reporter._stack()
    return stack[-1].observation if stack else None


class GraphedUpdate:
    """``optimizer.update(loss_func, *inputs, **kw_inputs)`` as a CUDA graph after warm-up.

    Args:
        optimizer (Optimizer): set up with the model, on one GPU.
        loss_func: callable on the batch's arrays returning the loss Variable.
        warmup (int): eager calls before the capture (at least 1: parameters and optimizer
            state must exist before it).

    Attributes:
        captured (bool): whether a graph is in use.
        fallback_reason (str or None): why the step runs eagerly for good (set once a
            capture was refused).
    """

    def __init__(self, optimizer, loss_func, warmup=DEFAULT_WARMUP):
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
            raise errors.UsageError(f'warmup: expected an int >= 1, got {warmup!r}')
        self.optimizer = optimizer
        self.loss_func = loss_func
        self.warmup = warmup
        self.fallback_reason = None
        self._calls = 0
        self._graph = None

    @property
    def captured(self):
        return self._graph is not None

    def __call__(self, *inputs, **kw_inputs):
        """Run one training step on the batch (device arrays)."""
        self._calls += 1
        if self.fallback_reason is None:
            host = _host_argument(inputs, kw_inputs)
            if host is not None:
                self._fall_back(host)
        if self.fallback_reason is not None or self._calls <= self.warmup:
            return self.optimizer.update(self.loss_func, *inputs, **kw_inputs)
        if self._graph is not None and self._graph.stale():
            # one eager step first: it puts the new arrays in place (the optimizer's
            # multi-tensor update views them from its flat buffers again)
            self._graph = None
            return self.optimizer.update(self.loss_func, *inputs, **kw_inputs)
        if self._graph is None:
            try:
                self._graph = _CapturedStep(self.optimizer, self.loss_func, inputs, kw_inputs)
            except errors.GraphCaptureError as error:
                self._fall_back(str(error))
                return self.optimizer.update(self.loss_func, *inputs, **kw_inputs)
        if not self._graph.fits(inputs, kw_inputs):
            return self.optimizer.update(self.loss_func, *inputs, **kw_inputs)
        self._graph.replay(inputs, kw_inputs)

    def _fall_back(self, reason):
        self.fallback_reason = reason
        warnings.warn(f'{reason}; the training step runs eagerly from now on', RuntimeWarning,
                      stacklevel=3)


def _host_argument(inputs, kw_inputs):
    """Why the batch cannot feed a graph (an argument not on a GPU), or None."""
    named = [(f'argument {i}', a) for i, a in enumerate(inputs)] + list(kw_inputs.items())
    if not any(_is_device_array(a) for _, a in named):
        return 'the batch is not on a GPU (CUDA graphs need one)'
    for name, value in named:
        if not _is_device_array(value):
            return (f'{name} of the training step is a {type(value).__name__} on the host: a '
                    'CUDA graph reads its inputs from device arrays that each batch is '
                    'copied into')
    return None


def _signature(inputs, kw_inputs):
    arrays = list(inputs) + [kw_inputs[k] for k in sorted(kw_inputs)]
    return (len(inputs), tuple(sorted(kw_inputs)),
            tuple((a.shape, numpy.dtype(a.dtype), a.device.id) for a in arrays))


class _Bindings:
    """The arrays a captured update reads and writes (parameters, optimizer state,
    persistent arrays such as batch-norm statistics), where each is held: replaced ones
    make a graph stale, and ``restore()`` puts them back after a refused capture."""

    def __init__(self, optimizer):
        self._held = []  # (setter, array)
        for param in optimizer.target.params():
            self._held.append((lambda a, p=param: setattr(p, 'array', a), param.array))
            rule = param.update_rule
            if rule is not None:
                # the state dict itself: one made in the capture (a first update there,
                # as after a multi-node optimizer's skipped first step) is taken back too
                self._held.append((lambda s, r=rule: setattr(r, 'state', s), rule.state))
            if rule is not None and rule.state is not None:
                self._held.extend((lambda a, s=rule.state, k=key: s.__setitem__(k, a), value)
                                  for key, value in rule.state.items())
        for link in optimizer.target.links():
            self._held.extend((lambda a, o=link, n=name: setattr(o, n, a), getattr(link, name))
                              for name in link._persistent)
        self.ids = tuple(id(array) for _, array in self._held)

    def restore(self):
        for setter, array in self._held:
            setter(array)


class _CapturedStep:
    """One capture of ``optimizer.update(loss_func, *static inputs)`` and its replays."""

    def __init__(self, optimizer, loss_func, inputs, kw_inputs):
        cupy = _cupy()
        self.optimizer = optimizer
        self.device = device = backend.get_device_from_array(
            (list(inputs) + list(kw_inputs.values()))[0])
        self.signature = _signature(inputs, kw_inputs)
        with device:
            self.inputs = [cupy.array(a) for a in inputs]
            self.kw_inputs = {k: cupy.array(a) for k, a in kw_inputs.items()}
        params = [p for p in optimizer.target.params()
                  if p.update_rule is not None and p.array is not None]
        self.slots = _HyperparameterSlots(params, device)
        self.slots.write()
        self.bindings = _Bindings(optimizer)
        observation = _current_observation()
        before = {} if observation is None else dict(observation)
        counters = [(rule, rule.t) for rule in (p.update_rule for p in params)]
        optimizer_t = optimizer.t
        self.pool = cupy.cuda.MemoryPool()  # the graph's own memory, never handed back
        stream = cupy.cuda.Stream(non_blocking=True)
        try:
            with device, cupy.cuda.using_allocator(self.pool.malloc), stream:
                self.graph = _capture(stream, lambda: self._run_step(loss_func, params))
            if _Bindings(optimizer).ids != self.bindings.ids:
                raise errors.GraphCaptureError(
                    'the training step replaces parameter, optimizer-state or persistent '
                    'arrays with new ones instead of updating them in place: its replays '
                    'would update arrays that nothing reads')
        except errors.GraphCaptureError:
            self.bindings.restore()  # the arrays of before the capture, as they were
            raise
        finally:
            self.counted = [rule for rule, t in counters if rule.t != t]
            for rule, t in counters:
                rule.t = t
            optimizer.t = optimizer_t
        self.observed = {} if observation is None else {
            key: value for key, value in observation.items()
            if key not in before or before[key] is not value}
        if observation is not None:
            observation.clear()
            observation.update(before)

    def _run_step(self, loss_func, params):
        rules = [(p.update_rule, p.update_rule.hyperparam) for p in params]
        try:
            for rule, real in rules:
                rule.hyperparam = _DeviceHyperparameters(real, self.slots.device_views(rule))
            self.optimizer.update(loss_func, *self.inputs, **self.kw_inputs)
        finally:
            for rule, real in rules:
                rule.hyperparam = real

    def fits(self, inputs, kw_inputs):
        """Whether the batch has the captured shapes, dtypes and device."""
        return _signature(inputs, kw_inputs) == self.signature

    def stale(self):
        """Whether parameters or optimizer state were replaced since the capture."""
        return _Bindings(self.optimizer).ids != self.bindings.ids

    def replay(self, inputs, kw_inputs):
        """Copy the batch into the static inputs, fill the hyperparameters, launch."""
        cupy = _cupy()
        with self.device:
            for static, new in zip(self.inputs, inputs):
                cupy.copyto(static, new)
            for key, new in kw_inputs.items():
                cupy.copyto(self.kw_inputs[key], new)
            self.slots.write()
            self.graph.launch()
        self.optimizer.t += 1
        for rule in self.counted:
            rule.t += 1
        observation = _current_observation()
        if observation is not None:
            observation.update(self.observed)


def _capture(stream, step, what='the training step'):
    """Capture ``step()`` on ``stream`` (current); its Graph, or GraphCaptureError."""
    cupy = _cupy()
    runtime_error = cupy.cuda.runtime.CUDARuntimeError
    refused = (runtime_error, errors.GraphCaptureError)
    stream.begin_capture()
    try:
        step()
    except BaseException as error:
        try:
            stream.end_capture()
        except runtime_error:
            pass  # invalidated by the error itself
        if isinstance(error, refused):
            raise errors.GraphCaptureError(
                f'{what} cannot be captured as a CUDA graph: {error}') from error
        raise
    try:
        return stream.end_capture()
    except runtime_error as error:
        raise errors.GraphCaptureError(
            f'{what} cannot be captured as a CUDA graph: {error}') from error


def _link_array_ids(link):
    """The ids of ``link``'s parameter and persistent arrays (what a captured network reads)."""
    ids = [id(param.array) for param in link.params()]
    for child in link.links():
        ids.extend(id(getattr(child, name)) for name in child._persistent)
    return tuple(ids)


class GraphedForward:
    """``func(x)`` of a network as CUDA graphs: one per input shape and dtype, captured at its
    first use and replayed after (inference; what ``predict(..., cuda_graph=True)`` runs).

    The first call with a shape runs ``func`` once eagerly (caches, lazily made constants),
    then captures it reading a static input array into a memory pool of its own, and
    launches the graph; later calls copy ``x`` into the static input and launch. The
    outputs are the graph's own arrays, overwritten by the next call of the same shape: use
    them (or copy them) before. A graph whose link had parameter or persistent arrays
    replaced (weights loaded, ``to_device``) is captured again. A capture refused (a host
    synchronisation, a shape that depends on the data...) warns once and ``func`` runs
    eagerly from then on.

    Args:
        func: callable on one device array returning Variables or arrays (nested in tuples
            or lists), the same shapes for the same input shape.
        link (Link): the link whose arrays ``func`` reads.
        what (str): what ``func`` is, for the messages.

    Attributes:
        fallback_reason (str or None): why it runs eagerly for good.
        n_graphs (int): graphs captured and kept (one per input shape and dtype).
    """

    def __init__(self, func, link, what='the network'):
        self.func = func
        self.link = link
        self.what = what
        self.fallback_reason = None
        self._graphs = {}

    @property
    def n_graphs(self):
        return len(self._graphs)

    def __call__(self, x):
        """``func(x)`` from its graph (``x``: a device array)."""
        if self.fallback_reason is not None:
            return self.func(x)
        if not _is_device_array(x):
            raise errors.UsageError(
                f'{self.what}: a CUDA graph reads a device array, got a '
                f'{type(x).__name__} on the host')
        key = (x.shape, numpy.dtype(x.dtype), x.device.id)
        graph = self._graphs.get(key)
        if graph is None or graph.ids != _link_array_ids(self.link):
            try:
                graph = _CapturedForward(self.func, self.link, x, self.what)
            except errors.GraphCaptureError as error:
                self.fallback_reason = str(error)
                self._graphs.clear()
                warnings.warn(f'{error}; {self.what} runs eagerly from now on',
                              RuntimeWarning, stacklevel=2)
                return self.func(x)
            self._graphs[key] = graph
        return graph.replay(x)


class _CapturedForward:
    """One capture of ``func(static input)`` and its replays."""

    def __init__(self, func, link, x, what):
        cupy = _cupy()
        self.device = backend.get_device_from_array(x)
        with self.device:
            self.input = cupy.array(x)
            func(self.input)  # warm-up, outside the capture
        self.ids = _link_array_ids(link)
        self.pool = cupy.cuda.MemoryPool()  # the graph's own memory, never handed back
        stream = cupy.cuda.Stream(non_blocking=True)
        outputs = []
        with self.device, cupy.cuda.using_allocator(self.pool.malloc), stream:
            self.graph = _capture(stream, lambda: outputs.append(func(self.input)), what)
        self.outputs = outputs[0]

    def replay(self, x):
        """Copy ``x`` into the static input, launch; the outputs."""
        with self.device:
            _cupy().copyto(self.input, x)
            self.graph.launch()
        return self.outputs
