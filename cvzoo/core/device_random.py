"""Random numbers drawn from state that lives on the device, so that a CUDA graph advances it.

A generator of ``cupy.random`` keeps its position on the host: a training step captured as
a CUDA graph would replay the same numbers on every launch. :class:`DeviceGenerator`
keeps a key and a counter as 0-d arrays on the device, hashes ``counter + i`` for the i-th
number (SplitMix64's finaliser, twice, keyed between the rounds) and adds the count drawn
to the counter with a device operation: the graph records that addition, so each replay
draws new numbers, the same ones an eager run draws from the same seed.

``dropout`` draws its masks on GPUs from here; on the CPU it keeps NumPy's generator.

>>> import numpy
>>> generator = DeviceGenerator(numpy, seed=1)
>>> first, second = generator.uniform((3,)), generator.uniform((3,))
>>> bool((first != second).all()), first.dtype.name
(True, 'float32')
"""

import threading

import numpy

from cvzoo.core import backend

_MASK = (1 << 64) - 1
_lock = threading.Lock()
_generators = {}  # device id -> DeviceGenerator
_seed = [0]


def _mix(z):
    """SplitMix64's finaliser on uint64 arrays (wrapping products, as on a GPU)."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    return z ^ (z >> 31)


def _key_of(seed):
    """The 64-bit key of a seed, computed on the host."""
    z = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class DeviceGenerator:
    """A counter-based generator whose key and counter are 0-d uint64 arrays of ``xp``.

    Args:
        xp: ``numpy`` or ``cupy`` (the arrays are made on the current device).
        seed (int): where the stream starts.
    """

    def __init__(self, xp, seed=0):
        self.xp = xp
        self.key = xp.zeros((), dtype=numpy.uint64)
        self.counter = xp.zeros((), dtype=numpy.uint64)
        self.seed(seed)

    def seed(self, seed):
        """Start the stream of ``seed`` again (fills the device arrays; no host copy)."""
        with backend.using_device_of(self.key):
            self.key.fill(_key_of(seed))
            self.counter.fill(0)

    def uniform(self, shape, dtype=numpy.float32):
        """Numbers in [0, 1) (multiples of 2**-24) of ``shape`` on the generator's device
        (made current here); advances the counter."""
        xp = self.xp
        size = int(numpy.prod(shape, dtype=numpy.int64))
        dtype = numpy.dtype(dtype)
        with backend.using_device_of(self.counter):
            index = xp.arange(size, dtype=numpy.uint64) + self.counter
            self.counter += numpy.uint64(size)
            bits = _mix(_mix(index) ^ self.key)
            return ((bits >> 40).astype(dtype) * dtype.type(2.0 ** -24)).reshape(shape)


def seed(value):
    """Seed every device's generator (those made later too), as ``numpy.random.seed``."""
    with _lock:
        _seed[0] = int(value)
        for generator in _generators.values():
            generator.seed(value)


def get_generator(array):
    """The generator of the GPU ``array`` lives on (made there at the first call)."""
    device = backend.get_device_from_array(array)
    with _lock:
        generator = _generators.get(device.id)
        if generator is None:
            with device:
                generator = _generators[device.id] = DeviceGenerator(device.xp, _seed[0])
        return generator
