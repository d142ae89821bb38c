"""Save state of variable structure (lists, dicts of floats) as one JSON key in a snapshot.

Loading checks every key's shape against the object before it changes anything (see
serializers/dictionary.py), so state whose size changes during training (a log, the keys
of a summary) cannot be spread over many keys: it is stored as the UTF-8 bytes of a JSON
document in one uint8 array, and asked for with ``None`` when loading (any shape fits).
"""

import json

import numpy

from cvzoo.core.serializers import serializer as serializer_module


def serialize_json(serializer, key, obj):
    """Save ``obj`` (JSON-able) under ``key``, or return the loaded object.

    Args:
        serializer: a Serializer or Deserializer.
        key (str): the key.
        obj: the current value (saved; returned unchanged when the file lacks the key).

    Returns:
        the loaded object when loading, else ``obj``.
    """
    if isinstance(serializer, serializer_module.Deserializer):
        loaded = serializer(key, None)
        if loaded is None:
            return obj
        return json.loads(numpy.asarray(loaded, numpy.uint8).tobytes().decode('utf-8'))
    encoded = numpy.frombuffer(json.dumps(obj).encode('utf-8'), dtype=numpy.uint8)
    serializer(key, encoded.copy())
    return obj
