"""Serializers: save and load Link and Optimizer trees (``.npz`` and HDF5)."""

from cvzoo.core.serializers.dictionary import DictionaryDeserializer, DictionarySerializer
from cvzoo.core.serializers.hdf5 import load_hdf5, save_hdf5
from cvzoo.core.serializers.npz import load_npz, save_npz
from cvzoo.core.serializers.serializer import Deserializer, Serializer

__all__ = [
    'Deserializer', 'DictionaryDeserializer', 'DictionarySerializer', 'Serializer',
    'load_hdf5', 'load_npz', 'save_hdf5', 'save_npz',
]
