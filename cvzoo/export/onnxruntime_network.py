"""Run a model's network in onnxruntime: what ``predict(..., runtime='onnxruntime')`` calls.

:func:`run` returns what ``model.forward(x)`` returns (the same nesting of Variables, on
the model's device), computed by an onnxruntime ``InferenceSession`` instead of cvzoo's
engine. The session is built from an export of the model's current weights
(:func:`~cvzoo.export.onnx_export.graph_to_model_proto`), in memory (no file is
written), once per input shape (channels, height, width; the batch axis is dynamic),
and kept on the model (:class:`SessionCache`). It is rebuilt when the weights change:
each call compares a fingerprint of the parameters and persistent arrays (which arrays
they are, their shapes, dtypes and a strided sample of their values) with the one the
sessions were built from, so a weight load, an optimizer step or a move to another
device drops them. ``model.__dict__['_onnxruntime_sessions'].clear()`` drops them by hand
(a change to a few elements that the sample misses is not seen).

The session runs on the CPU (onnxruntime's CPUExecutionProvider); for a model on a GPU
the batch is copied to the host and the outputs back, once per call.
"""

import dataclasses
import hashlib
import weakref

import numpy

from cvzoo import errors
from cvzoo.core import backend, variable
from cvzoo.export import graph_trace, onnx_export
from cvzoo.export.unsupported_function_error import UnsupportedFunctionError

CACHE_ATTRIBUTE = '_onnxruntime_sessions'
SAMPLES_PER_ARRAY = 32
PROVIDERS = ['CPUExecutionProvider']
_SLOT = object()  # where an output of the session goes in the forward's result


def _import_onnxruntime():
    try:
        import onnxruntime  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise errors.UsageError(
            "runtime='onnxruntime': the onnxruntime package is not installed "
            "(pip install 'cvzoo[onnx]')") from None
    return onnxruntime


@dataclasses.dataclass
class _Entry:
    session: object    # onnxruntime.InferenceSession
    template: object   # the forward's result with _SLOT for each Variable


class SessionCache:
    """The onnxruntime sessions of one model, for one fingerprint of its weights.

    Attributes:
        fingerprint (bytes or None): the weights the sessions were built from.
        entries (dict): (input shape without the batch axis, dtype) -> session and the
            nesting of the forward's result.

    A deep copy of the model gets an empty cache (sessions cannot be copied); a shallow
    one (``Link.copy``) shares this object at first, and replaces it on its first run
    because the cache names its owner.
    """

    def __init__(self, owner=None):
        self.owner = None if owner is None else weakref.ref(owner)
        self.fingerprint = None
        self.entries = {}

    def __reduce__(self):
        return (SessionCache, ())

    def clear(self):
        """Drop every session (the next call exports the model again)."""
        self.fingerprint = None
        self.entries = {}


def weights_fingerprint(model):
    """A digest of ``model``'s parameters and persistent arrays: which arrays they are
    (their ids), shapes, dtypes, device and ``SAMPLES_PER_ARRAY`` values of each, read
    from the device in one transfer.

    Returns:
        bytes: equal for two calls when no array was replaced, moved or (at the sampled
        positions) changed in between.
    """
    arrays = [param.array for _, param in model.namedparams(include_uninit=False)]
    for _, link in model.namedlinks():
        arrays += [value for value in (getattr(link, name, None) for name in link._persistent)
                   if value is not None and not numpy.isscalar(value)]
    digest = hashlib.blake2b(str(model.device).encode(), digest_size=16)
    samples = []
    for array in arrays:
        digest.update(f'{id(array)}:{array.shape}:{array.dtype};'.encode())
        step = max(1, array.size // SAMPLES_PER_ARRAY)
        samples.append(array.reshape(-1)[::step].astype(numpy.float64))
    if samples:
        xp = backend.get_array_module(samples[0])
        digest.update(backend.to_numpy(xp.concatenate(samples)).tobytes())
    return digest.digest()


def _template(result):
    """The forward's result with every Variable replaced by ``_SLOT``."""
    if isinstance(result, variable.Variable):
        return _SLOT
    if isinstance(result, (list, tuple)):
        items = [_template(item) for item in result]
        return items if isinstance(result, list) else tuple(items)
    return result


def _fill(template, values):
    """``template`` with each ``_SLOT`` replaced by the next of the iterator ``values``."""
    if template is _SLOT:
        return next(values)
    if isinstance(template, (list, tuple)):
        items = [_fill(item, values) for item in template]
        return items if isinstance(template, list) else tuple(items)
    return template


def _build_entry(ort, model, example):
    """Export ``model`` traced on the host batch ``example`` and open a session on it."""
    name = type(model).__name__
    try:
        graph = graph_trace.trace(model, backend.to_device(example, model.device))
        proto = onnx_export.graph_to_model_proto(graph, model)
    except UnsupportedFunctionError as exc:
        raise errors.UsageError(f"runtime='onnxruntime': {exc}") from exc
    except ImportError as exc:
        raise errors.UsageError(f"runtime='onnxruntime' cannot export {name}: {exc}") from exc
    options = ort.SessionOptions()
    options.log_severity_level = 3  # NOTE: errors only; the optimiser's notes are noise
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=PROVIDERS)
    return _Entry(session, _template(graph.result))


def _cache_of(model):
    cache = model.__dict__.get(CACHE_ATTRIBUTE)
    if cache is None or cache.owner is None or cache.owner() is not model:
        cache = SessionCache(model)
        model.__dict__[CACHE_ATTRIBUTE] = cache
    return cache


def run(model, x):
    """``model.forward(x)`` computed by onnxruntime (see the module docstring).

    Args:
        model: a Link whose ``forward`` takes one (B, C, H, W) batch.
        x (array): (B, C, H, W) float32 batch, on the host or the model's device.

    Returns:
        what ``model.forward(x)`` returns, with each Variable's array computed by the
        session, on the model's device.

    Raises:
        cvzoo.errors.UsageError: onnxruntime (or onnx) is not installed, or the model's
            network has a function with no ONNX translation (the message names it).

    >>> import numpy as np
    >>> from cvzoo.core import links as L
    >>> link = L.Linear(3, 2)
    >>> x = np.ones((4, 3), np.float32)
    >>> bool(np.allclose(run(link, x).array, link(x).array, atol=1e-6))
    True
    """
    ort = _import_onnxruntime()
    with model.device:
        return _run_on_device(ort, model, x)


def _run_on_device(ort, model, x):
    host_x = numpy.ascontiguousarray(backend.to_numpy(x))
    cache = _cache_of(model)
    fingerprint = weights_fingerprint(model)
    if fingerprint != cache.fingerprint:
        cache.clear()
        cache.fingerprint = fingerprint
    key = (host_x.shape[1:], host_x.dtype.str)
    entry = cache.entries.get(key)
    if entry is None:
        entry = cache.entries[key] = _build_entry(ort, model, host_x[:1])
    outputs = entry.session.run(None, {'input': host_x})
    return _fill(entry.template, iter([variable.Variable(backend.to_device(y, model.device))
                                       for y in outputs]))
