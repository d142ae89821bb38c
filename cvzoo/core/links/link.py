"""Link, Chain and ChainList: objects that own parameters, persistents and child links.

A Link registers a Parameter (or a child Link, for Chain) only when it is assigned inside
``with self.init_scope():``; outside that block an assignment makes a plain attribute.
Paths name everything in the tree: ``'/conv1/W'`` is parameter ``W`` of child ``conv1``.

>>> import numpy as np
>>> from cvzoo.core.variable import Parameter
>>> class Affine(Link):
...     def __init__(self):
...         super().__init__()
...         with self.init_scope():
...             self.W = Parameter(np.ones((2, 3), dtype=np.float32))
>>> class Net(Chain):
...     def __init__(self):
...         super().__init__()
...         with self.init_scope():
...             self.fc = Affine()
>>> [path for path, _ in Net().namedparams()]
['/fc/W']
"""

import contextlib
import copy as copy_module

import numpy

from cvzoo.core import backend, initializers
from cvzoo.core import variable as variable_module

_COPY_MODES = ('share', 'copy', 'init')


def _copy_parameter(param, mode):
    """A new Parameter like ``param``: same array ('share'), a copy, or re-initialised."""
    new = variable_module.Parameter(param.initializer, name=param.name)
    new.to_device(param.device)
    new.requires_grad = param.requires_grad
    if not param.is_initialized:
        return new
    if mode == 'share':
        new.array = param.array
    elif mode == 'copy':
        new.array = backend.to_device(param.array, param.device, copy=True)
    else:
        new.initialize(param.shape)
    return new


def _copy_persistent(value, mode):
    """``value`` itself ('share') or a copy; a device array is copied on its own device."""
    if mode == 'share' or not hasattr(value, 'copy'):
        return value
    with backend.using_device_of(value):  # a GPU array's copy lands on the current device
        return value.copy()


class Link:
    """A building block of models: holds parameters and persistent values.

    Subclasses register parameters in ``__init__`` inside ``with self.init_scope():``
    and compute in ``forward``; calling the link calls ``forward``.

    Attributes:
        name (str): the attribute name under its parent, or None for a root.
    """

    def __init__(self):
        self._params = []
        self._persistent = []
        self._within_init_scope = False
        self._device = backend.CPU
        self.name = None

    # --- registration ---

    @property
    def within_init_scope(self):
        """True inside ``with self.init_scope():``."""
        return getattr(self, '_within_init_scope', False)

    @contextlib.contextmanager
    def init_scope(self):
        """Context in which assigned Parameters (and Links, for Chain) are registered."""
        old = self._within_init_scope
        self._within_init_scope = True
        try:
            yield
        finally:
            self._within_init_scope = old

    def __setattr__(self, name, value):
        params = self.__dict__.get('_params', [])
        if self.within_init_scope and isinstance(value, variable_module.Parameter):
            if name in self._persistent:
                raise AttributeError(f'{type(self).__name__}: {name!r} is a persistent')
            value.name = name
            if not value.is_initialized:
                value.to_device(self._device)
            if name not in params:
                params.append(name)
        elif name in params and not isinstance(value, variable_module.Parameter):
            params.remove(name)  # e.g. ``self.b = None``: no longer a parameter
        super().__setattr__(name, value)

    def __delattr__(self, name):
        for registry in ('_params', '_persistent'):
            names = self.__dict__.get(registry, [])
            if name in names:
                names.remove(name)
        super().__delattr__(name)

    def _check_name_free(self, name):
        if name in self._params or name in self._persistent:
            raise AttributeError(f'{type(self).__name__}: {name!r} is already registered')

    def add_param(self, name, shape=None, dtype=numpy.float32, initializer=None):
        """Register a new Parameter ``name`` (created now if ``shape`` is given).

        Args:
            name (str): attribute name.
            shape (tuple of int or None): None leaves it uninitialised (lazy).
            dtype: dtype used when ``initializer`` does not fix one.
            initializer: an Initializer, array or scalar; None fills with NaN.
        """
        if name in self.__dict__:
            raise AttributeError(f'{type(self).__name__}: attribute {name!r} already exists')
        if not isinstance(initializer, numpy.ndarray) and not hasattr(initializer, 'shape'):
            initializer = copy_module.copy(initializers.as_initializer(initializer))
            if getattr(initializer, 'dtype', None) is None:
                initializer.dtype = dtype
        with self.init_scope():
            setattr(self, name, variable_module.Parameter(initializer, shape))

    def add_persistent(self, name, value):
        """Register a persistent value (array or scalar): moved by to_device, serialized."""
        if name in self.__dict__:
            raise AttributeError(f'{type(self).__name__}: attribute {name!r} already exists')
        self._persistent.append(name)
        object.__setattr__(self, name, value)

    def register_persistent(self, name):
        """Register an existing attribute as persistent."""
        if name not in self.__dict__:
            raise AttributeError(f'{type(self).__name__}: no attribute {name!r} to register')
        self._check_name_free(name)
        self._persistent.append(name)

    # --- traversal ---

    def _named_children(self):
        """(name, child link) pairs; Chain and ChainList override it."""
        return ()

    def children(self):
        """Yield the direct child links."""
        for _, child in self._named_children():
            yield child

    def namedlinks(self, skipself=False):
        """Yield (path, link) for this link (path '/') and every descendant."""
        if not skipself:
            yield '/', self
        for name, child in self._named_children():
            prefix = '/' + name
            for path, link in child.namedlinks():
                yield (prefix if path == '/' else prefix + path), link

    def links(self, skipself=False):
        """Yield this link and every descendant."""
        for _, link in self.namedlinks(skipself):
            yield link

    def namedparams(self, include_uninit=True):
        """Iterate over (path, Parameter) for every parameter of the tree, e.g. '/conv1/W'."""
        pairs = []
        self._collect_params('', pairs, include_uninit)
        return iter(pairs)

    def _collect_params(self, prefix, pairs, include_uninit):
        # NOTE: a list filled in one walk, not nested generators: each level of a nested
        # generator is one more Python call per parameter, and cleargrads and every
        # update walk all the parameters.
        for name in self._params:
            param = self.__dict__[name]
            if include_uninit or param._array is not None:
                pairs.append((prefix + '/' + name, param))
        for name, child in self._named_children():
            child._collect_params(prefix + '/' + name, pairs, include_uninit)

    def params(self, include_uninit=True):
        """Iterate over every Parameter of the tree."""
        pairs = []
        self._collect_params('', pairs, include_uninit)
        return iter([param for _, param in pairs])

    def count_params(self):
        """Return the number of elements of all initialised parameters."""
        return sum(param.size for param in self.params(include_uninit=False))

    # --- gradients and copies ---

    def cleargrads(self):
        """Set every parameter's gradient to None."""
        for _, param in self.namedparams():
            param.cleargrad()

    def zerograds(self):
        """Set every initialised parameter's gradient to zeros."""
        for param in self.params(include_uninit=False):
            param.zerograd()

    def addgrads(self, other):
        """Add the gradients of ``other`` (a link of the same structure) into this one's."""
        sources = dict(other.namedparams())
        for path, dst in self.namedparams():
            src = sources[path]
            if src.grad is None:
                continue
            with backend.using_device_of(dst.array):
                grad = backend.to_device(src.grad, dst.device)
                if dst.grad is None:
                    dst.grad = grad.copy()
                else:
                    dst.grad += grad

    def copyparams(self, other, copy_persistent=True):
        """Copy parameter values (and persistents) of ``other`` into this link's arrays."""
        sources = dict(other.namedparams())
        for path, dst in self.namedparams():
            src = sources[path]
            if not src.is_initialized:
                continue
            if not dst.is_initialized:
                dst.initialize(src.shape)
            with backend.using_device_of(dst.array):
                dst.array[...] = backend.to_device(src.array, dst.device)
        if not copy_persistent:
            return
        others = dict(other.namedlinks())
        for path, link in self.namedlinks():
            for name in link._persistent:
                value = others[path].__dict__[name]
                link._set_persistent_from(name, value)

    def _set_persistent_from(self, name, value):
        mine = self.__dict__[name]
        if hasattr(mine, 'shape') and hasattr(value, 'shape') and mine.shape == value.shape:
            with backend.using_device_of(mine):
                mine[...] = backend.to_device(value, backend.get_device_from_array(mine))
        elif hasattr(value, 'shape') and not numpy.isscalar(value):
            # a new array on this link's device, whichever device the source lives on
            object.__setattr__(self, name, backend.to_device(value, self._device, copy=True))
        else:
            object.__setattr__(self, name, _copy_persistent(value, 'copy'))

    def copy(self, mode='share'):
        """Return a copy of this link tree; the copy has no parent and no optimizer.

        Args:
            mode (str): 'share' - new Parameter objects sharing the arrays; 'copy' - deep
                copies of the arrays; 'init' - parameters re-initialised by their
                initializers (persistents are copied).
        """
        if mode not in _COPY_MODES:
            raise ValueError(f'mode: expected one of {_COPY_MODES}, got {mode!r}')
        new = copy_module.copy(self)
        new._params = list(self._params)
        new._persistent = list(self._persistent)
        new.name = None
        for name in self._params:
            new.__dict__[name] = _copy_parameter(self.__dict__[name], mode)
        for name in self._persistent:
            new.__dict__[name] = _copy_persistent(self.__dict__[name], mode)
        return new

    def disable_update(self):
        """Freeze every parameter of the tree (their update rules skip them)."""
        for param in self.params():
            if param.update_rule is not None:
                param.update_rule.enabled = False

    def enable_update(self):
        """Undo disable_update()."""
        for param in self.params():
            if param.update_rule is not None:
                param.update_rule.enabled = True

    # --- devices ---

    @property
    def device(self):
        """The Device the link's parameters live on."""
        return self._device

    @property
    def xp(self):
        """The array module of the link's device."""
        return self._device.xp

    def to_device(self, device):
        """Move every parameter, gradient, optimizer state and persistent array in place.

        Returns:
            Link: self.
        """
        device = backend.get_device(device)
        for link in self.links():
            link._device = device
            for name in link._params:
                link.__dict__[name].to_device(device)
            for name in link._persistent:
                value = link.__dict__[name]
                if hasattr(value, 'shape') and not numpy.isscalar(value):
                    link.__dict__[name] = backend.to_device(value, device)
        return self

    # --- calling, saving, printing ---

    def __call__(self, *args, **kwargs):
        # the link's own device is current while it runs (arrays it makes land there);
        # entering the CPU or the current GPU does nothing, so those skip the ``with``
        device = self._device
        if device.kind == 'cpu' or backend.is_current(device):
            return self.forward(*args, **kwargs)
        with device:
            return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """Compute the link's output; subclasses implement it."""
        raise NotImplementedError(f'{type(self).__name__} does not implement forward')

    def serialize(self, serializer):
        """Save or load parameters and persistents (and children) through ``serializer``."""
        for name in self._params:
            serializer(name, self.__dict__[name])
        for name in self._persistent:
            value = serializer(name, self.__dict__[name])
            if value is not None and hasattr(value, 'shape') and not numpy.isscalar(value):
                value = backend.to_device(value, self._device)
            object.__setattr__(self, name, value)
        for name, child in self._named_children():
            child.serialize(serializer[name])

    def _repr_args(self):
        """Arguments shown by repr(); layer links override it."""
        return ''

    def __repr__(self):
        head = f'{type(self).__name__}({self._repr_args()}'
        children = list(self._named_children())
        if not children:
            return head + ')'
        lines = [head]
        for name, child in children:
            body = repr(child).replace('\n', '\n  ')
            lines.append(f'  ({name}): {body},')
        return '\n'.join(lines) + '\n)'


class Chain(Link):
    """A Link whose child links are registered by attribute name in ``init_scope``."""

    def __init__(self):
        super().__init__()
        self._children = []

    def __setattr__(self, name, value):
        children = self.__dict__.get('_children', [])
        if self.within_init_scope and isinstance(value, Link):
            self._check_name_free(name)
            value.name = name
            if name not in children:
                children.append(name)
        elif name in children and not isinstance(value, Link):
            children.remove(name)
        super().__setattr__(name, value)

    def __delattr__(self, name):
        children = self.__dict__.get('_children', [])
        if name in children:
            children.remove(name)
        super().__delattr__(name)

    def __getitem__(self, name):
        """Return the child link ``name``."""
        return getattr(self, name)

    def add_link(self, name, link):
        """Register ``link`` as child ``name`` (same as assigning it in init_scope)."""
        if name in self.__dict__:
            raise AttributeError(f'{type(self).__name__}: attribute {name!r} already exists')
        with self.init_scope():
            setattr(self, name, link)

    def _named_children(self):
        return [(name, self.__dict__[name]) for name in self._children]

    def copy(self, mode='share'):
        new = super().copy(mode)
        new._children = list(self._children)
        for name in self._children:
            child = self.__dict__[name].copy(mode)
            child.name = name
            new.__dict__[name] = child
        return new


class ChainList(Link):
    """A Link whose child links form a list, named '0', '1', ... in paths.

    Args:
        *links: initial children.
    """

    def __init__(self, *links):
        super().__init__()
        self._children = []
        for link in links:
            self.append(link)

    def __setattr__(self, name, value):
        if self.within_init_scope and isinstance(value, Link):
            raise TypeError(
                f'{type(self).__name__}: cannot register link {name!r} by assignment; '
                'use append()')
        super().__setattr__(name, value)

    def append(self, link):
        """Add ``link`` at the end."""
        if not isinstance(link, Link):
            raise TypeError(f'link: expected a Link, got {type(link).__name__}')
        link.name = str(len(self._children))
        self._children.append(link)

    add_link = append

    def __getitem__(self, index):
        return self._children[index]

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(self._children)

    def _named_children(self):
        return [(str(i), link) for i, link in enumerate(self._children)]

    def copy(self, mode='share'):
        new = super().copy(mode)
        new._children = []
        for i, link in enumerate(self._children):
            child = link.copy(mode)
            child.name = str(i)
            new._children.append(child)
        return new
