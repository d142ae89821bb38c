"""Hyperparameter: named settings that fall back to a parent's when not set here.

Each parameter's UpdateRule has a Hyperparameter whose parent is the optimizer's, so
``optimizer.lr = 0.1`` changes every rule that did not override ``lr``.

>>> parent = Hyperparameter()
>>> parent.lr = 0.1
>>> child = Hyperparameter(parent)
>>> child.lr
0.1
"""


class Hyperparameter:
    """A set of named values with an optional parent to inherit from.

    Args:
        parent (Hyperparameter or None): where names not set here are looked up.
    """

    def __init__(self, parent=None):
        object.__setattr__(self, '_parent', parent)

    def __getattr__(self, name):
        parent = self.__dict__.get('_parent')
        if parent is None or name.startswith('_'):
            raise AttributeError(f'no hyperparameter {name!r}')
        return getattr(parent, name)

    @property
    def parent(self):
        """The Hyperparameter names fall back to, or None."""
        return self._parent

    def get_dict(self):
        """Return every value visible here (own ones override the parent's) as a dict."""
        values = {} if self._parent is None else self._parent.get_dict()
        values.update({k: v for k, v in self.__dict__.items() if k != '_parent'})
        return values

    def __repr__(self):
        return f'Hyperparameter({self.get_dict()})'
