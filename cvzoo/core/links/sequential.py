"""Sequential: a list of layers (links or plain callables) applied one after another.

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> seq = Sequential(F.exp, F.log)
>>> seq(np.array([1.0, 2.0])).array
array([1., 2.])
"""

from cvzoo.core.links import link as link_module


class Sequential(link_module.ChainList):
    """Apply ``layers`` in order; each gets the previous one's output.

    Links among the layers are children, named by their position among all layers, so
    ``Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))`` has parameters ``'/0/W'`` and
    ``'/2/W'``. Indexing, ``len`` and iteration cover every layer.

    Args:
        *layers: Links or callables taking and returning one Variable.
    """

    def __init__(self, *layers):
        super().__init__()
        for layer in layers:
            self.append(layer)

    def append(self, layer):
        """Add ``layer`` (a Link or a callable) at the end."""
        if not callable(layer):
            raise TypeError(f'layer: expected a Link or a callable, got {type(layer).__name__}')
        if isinstance(layer, link_module.Link):
            layer.name = str(len(self._children))
        self._children.append(layer)

    add_link = append

    def _named_children(self):
        return [(str(i), layer) for i, layer in enumerate(self._children)
                if isinstance(layer, link_module.Link)]

    def forward(self, x):
        """Run ``x`` through every layer in order."""
        for layer in self._children:
            x = layer(x)
        return x

    def copy(self, mode='share'):
        new = link_module.Link.copy(self, mode)
        new._children = []
        for i, layer in enumerate(self._children):
            if isinstance(layer, link_module.Link):
                layer = layer.copy(mode)
                layer.name = str(i)
            new._children.append(layer)
        return new

    def __repr__(self):
        lines = [f'{type(self).__name__}(']
        for i, layer in enumerate(self._children):
            body = repr(layer).replace('\n', '\n  ')
            if not isinstance(layer, link_module.Link):
                body = getattr(layer, '__name__', body)
            lines.append(f'  ({i}): {body},')
        return '\n'.join(lines) + '\n)'
