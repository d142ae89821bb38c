"""The runtimes that predict() can run a model's network in.

predict() keeps its preprocessing and decoding in cvzoo; only the network between them
(``model.forward(x)``) runs in the runtime chosen by its ``runtime`` argument:

- ``'cvzoo'`` (the default): cvzoo's own engine, on the model's device;
- ``'onnxruntime'``: an onnxruntime session built from an ONNX export of the model's
  current weights, kept on the model and rebuilt when they change
  (:mod:`cvzoo.export.onnxruntime_network`; needs ``pip install 'cvzoo[onnx]'``).

Two options change how cvzoo's engine runs it (:func:`check_options` refuses what cannot
be, before any image is read):

- ``cuda_graph=True``: on a GPU, the network as CUDA graphs, one per input shape, captured
  at its first use and replayed after (:class:`cvzoo.core.cuda_graph.GraphedForward`; a
  refused capture warns once and runs eagerly). On the CPU it is a UsageError (no graphs
  there: the flag would silently mean nothing);
- ``dtype='bfloat16'`` or ``'float16'``: the network under
  ``cvzoo.core.autocast(dtype)`` (convolutions and products in the low precision), its
  outputs cast back to float32, so decoding and predict's results stay float32.

Both need a network that takes the image batch alone (the models that can also run in
onnxruntime).

>>> check_runtime('onnxruntime')
>>> check_runtime('tensorrt')
Traceback (most recent call last):
...
cvzoo.errors.UsageError: runtime: expected one of ('cvzoo', 'onnxruntime'), got 'tensorrt'
"""

import weakref

import numpy

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import cuda_graph, mixed_precision

RUNTIMES = ('cvzoo', 'onnxruntime')
DTYPES = ('float32', 'bfloat16', 'float16')

_GRAPHED = weakref.WeakKeyDictionary()  # model -> {dtype: GraphedForward}


def runtimes_of(model):
    """The runtimes a model (or model class) can run in: its ``runtimes`` attribute.

    The family bases (classifiers, semantic segmenters, detectors) have all of
    ``RUNTIMES``; a model whose network takes more than the image batch (a two-stage
    detector) or whose predict() is its own (sliding windows, flips) has ``('cvzoo',)``.
    """
    return getattr(model, 'runtimes', ('cvzoo',))


def check_runtime(runtime, model=None):
    """Raise a UsageError unless ``runtime`` is known and ``model`` can run in it.

    Args:
        runtime (str): one of ``RUNTIMES``.
        model: a model or model class (checked against :func:`runtimes_of`), or None.
    """
    if not isinstance(runtime, str) or runtime not in RUNTIMES:
        raise errors.UsageError(f'runtime: expected one of {RUNTIMES}, got {runtime!r}')
    if model is not None and runtime not in runtimes_of(model):
        name = (model if isinstance(model, type) else type(model)).__name__
        raise errors.UsageError(
            f'runtime={runtime!r}: {name} runs only in {runtimes_of(model)} (its network '
            'takes more than the image batch, or its predict() is its own; '
            'docs/onnxruntime.md)')


def check_options(model, runtime='cvzoo', cuda_graph=False, dtype='float32'):
    """Raise a UsageError naming the argument unless predict() can run ``model``'s network
    with ``runtime``, ``cuda_graph`` and ``dtype`` (see the module docstring)."""
    check_runtime(runtime, model)
    if not isinstance(cuda_graph, bool):
        raise errors.UsageError(f'cuda_graph: expected True or False, got {cuda_graph!r}')
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise errors.UsageError(f'dtype: expected one of {DTYPES}, got {dtype!r}')
    name = type(model).__name__
    for option, wanted in (('cuda_graph=True', cuda_graph), (f'dtype={dtype!r}',
                                                            dtype != 'float32')):
        if not wanted:
            continue
        if runtime != 'cvzoo':
            raise errors.UsageError(f"{option}: only with runtime='cvzoo', got {runtime!r}")
        if 'onnxruntime' not in runtimes_of(model):
            raise errors.UsageError(
                f'{option}: {name} runs its network with more than the image batch, or has '
                'a predict() of its own; only classifiers, semantic segmenters and one-stage '
                'detectors take it')
    if dtype != 'float32':
        mixed_precision.low_precision_dtype(dtype)  # bfloat16 needs ml_dtypes
    if cuda_graph and model.device.kind != 'cuda':
        raise errors.UsageError(
            f'cuda_graph=True: {name} is on {model.device.name}; CUDA graphs need the '
            "model on a GPU (model.to_device('cuda'))")


def run_network(model, x, runtime='cvzoo', cuda_graph=False, dtype='float32'):
    """``model.forward(x)``, computed by ``runtime``.

    Args:
        model: a model whose ``forward`` takes the prepared (B, 3, H, W) batch alone.
        x (array): the batch, on the model's device.
        runtime (str): one of ``RUNTIMES``.
        cuda_graph (bool): replay the network from a CUDA graph per input shape.
        dtype (str): one of ``DTYPES``: the precision of the convolutions and products;
            the outputs are float32 whatever it is.

    Returns:
        what ``model.forward(x)`` returns (Variables on the model's device); with
        ``cuda_graph`` the graph's own arrays, overwritten by the next batch of the shape.

    Raises:
        cvzoo.errors.UsageError: an unknown runtime, a runtime that is not installed, or
            a network that cannot be exported to it, or options it cannot take (the
            message says which).
    """
    check_runtime(runtime)
    if cuda_graph:
        return graphed_network(model, dtype)(x)
    if runtime == 'cvzoo':
        return _network(model, dtype)(x)
    # imported on first use: it needs the optional onnx and onnxruntime packages
    from cvzoo.export import onnxruntime_network

    return onnxruntime_network.run(model, x)


def _network(model, dtype):
    """``model.forward`` as a function of the batch, run in ``dtype`` (float32 outputs);
    it holds ``model`` as given (a weak proxy stays weak)."""
    def forward(x):
        if dtype == 'float32':
            return model.forward(x)
        with mixed_precision.autocast(dtype):
            outputs = model.forward(x)
        return _as_float32(outputs)

    return forward


def _as_float32(outputs):
    """``outputs`` (a Variable, or tuples and lists of them) with float arrays in float32."""
    if isinstance(outputs, (tuple, list)):
        return type(outputs)(_as_float32(output) for output in outputs)
    if outputs.dtype == numpy.float16 or outputs.dtype.name == 'bfloat16':
        return F.cast(outputs, numpy.float32)
    return outputs


def graphed_network(model, dtype='float32'):
    """The :class:`~cvzoo.core.cuda_graph.GraphedForward` that ``cuda_graph=True`` runs
    ``model``'s network in ``dtype`` with (its graphs and ``fallback_reason``), made at the
    first call and kept while the model lives."""
    graphs = _GRAPHED.setdefault(model, {})
    if dtype not in graphs:
        proxy = weakref.proxy(model)  # the value must not keep its key alive
        graphs[dtype] = cuda_graph.GraphedForward(
            _network(proxy, dtype), proxy, what=f'the network of {type(model).__name__}')
    return graphs[dtype]
