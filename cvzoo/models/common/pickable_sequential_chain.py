"""PickableSequentialChain: a chain run layer by layer that can return inner features.

Classifiers are written as a sequence of named layers. ``pick`` names the layers whose
outputs ``forward`` returns, so the same class serves as a classifier (the last layer)
and as a backbone for detectors and segmenters (``pick=('res4', 'res5')``). Layers after
the last picked one are skipped.
"""

import cvzoo.core.links as L


class PickableSequentialChain(L.Chain):
    """A Chain whose child links (or functions) run in the order they were assigned.

    Assign layers inside ``init_scope``; plain callables (e.g. ``F.relu``) assigned
    there are layers too.

    Attributes:
        layer_names (list of str): the layers, in order.
        pick (str or tuple of str): which outputs forward returns (default: the last).
    """

    def __init__(self):
        super().__init__()
        self.layer_names = []
        self._pick = None
        self._return_tuple = False

    def __setattr__(self, name, value):
        if self.within_init_scope and callable(value) and not name.startswith('_'):
            if name not in self.__dict__.get('layer_names', ()):
                self.layer_names.append(name)
        super().__setattr__(name, value)

    @property
    def pick(self):
        return self._pick if self._pick is not None else self.layer_names[-1]

    @pick.setter
    def pick(self, value):
        names = (value,) if isinstance(value, str) else tuple(value)
        unknown = [n for n in names if n not in self.layer_names]
        if unknown:
            raise ValueError(f'pick: unknown layers {unknown}; the layers are {self.layer_names}')
        self._pick = value
        self._return_tuple = not isinstance(value, str)

    def remove_unused(self):
        """Delete the layers after the last picked one (saves memory and time)."""
        names = (self.pick,) if isinstance(self.pick, str) else self.pick
        last = max(self.layer_names.index(n) for n in names)
        for name in self.layer_names[last + 1:]:
            delattr(self, name)
        self.layer_names = self.layer_names[:last + 1]

    def forward(self, x):
        """Run the layers in order; return the picked output(s)."""
        names = (self.pick,) if isinstance(self.pick, str) else tuple(self.pick)
        last = max(self.layer_names.index(n) for n in names)
        outputs = {}
        h = x
        for name in self.layer_names[:last + 1]:
            h = getattr(self, name)(h)
            if name in names:
                outputs[name] = h
        if self._return_tuple:
            return tuple(outputs[n] for n in names)
        return outputs[names[0]]
