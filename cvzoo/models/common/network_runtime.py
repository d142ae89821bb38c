"""The runtimes that predict() can run a model's network in.

predict() keeps its preprocessing and decoding in cvzoo; only the network between them
(``model.forward(x)``) runs in the runtime chosen by its ``runtime`` argument:

- ``'cvzoo'`` (the default): cvzoo's own engine, on the model's device;
- ``'onnxruntime'``: an onnxruntime session built from an ONNX export of the model's
  current weights, kept on the model and rebuilt when they change
  (:mod:`cvzoo.export.onnxruntime_network`; needs ``pip install 'cvzoo[onnx]'``).

>>> check_runtime('onnxruntime')
>>> check_runtime('tensorrt')
Traceback (most recent call last):
...
cvzoo.errors.UsageError: runtime: expected one of ('cvzoo', 'onnxruntime'), got 'tensorrt'
"""

from cvzoo import errors

RUNTIMES = ('cvzoo', 'onnxruntime')


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


def run_network(model, x, runtime='cvzoo'):
    """``model.forward(x)``, computed by ``runtime``.

    Args:
        model: a model whose ``forward`` takes the prepared (B, 3, H, W) batch alone.
        x (array): the batch, on the model's device.
        runtime (str): one of ``RUNTIMES``.

    Returns:
        what ``model.forward(x)`` returns (Variables on the model's device).

    Raises:
        cvzoo.errors.UsageError: an unknown runtime, a runtime that is not installed, or
            a network that cannot be exported to it (the message says which).
    """
    check_runtime(runtime)
    if runtime == 'cvzoo':
        return model.forward(x)
    # imported on first use: it needs the optional onnx and onnxruntime packages
    from cvzoo.export import onnxruntime_network

    return onnxruntime_network.run(model, x)
