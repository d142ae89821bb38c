"""The serializer protocol (Chainer's): one ``serialize(serializer)`` method saves and loads.

An object walks its state through a serializer: ``serializer['child']`` gives the
sub-serializer of a child, and ``value = serializer('name', value)`` saves ``value`` (a
Serializer returns it unchanged) or loads into it (a Deserializer copies into arrays and
Parameters in place and returns the loaded value for scalars and None).
"""


class AbstractSerializer:
    """Base of Serializer and Deserializer.

    Attributes:
        path (str): the prefix of keys under this serializer, ending with '/' (or '').
    """

    def __init__(self, path=''):
        self.path = path

    def __getitem__(self, key):
        """Return the serializer of child ``key``."""
        raise NotImplementedError

    def __call__(self, key, value):
        """Save or load ``value`` under ``key``; return the (loaded) value."""
        raise NotImplementedError

    def _child_path(self, key):
        return self.path + key.strip('/') + '/'


class Serializer(AbstractSerializer):
    """A serializer that saves."""


class Deserializer(AbstractSerializer):
    """A serializer that loads."""
