"""Data parallelism in one process: PyTorch's primitives on cvzoo's engine.

``data_parallel(link, x, devices)`` splits the batch over the devices, runs one replica
of the link per device (each in its own thread, with its device current), and gathers
the outputs on one device. Everything is differentiable: the replicas' parameters are
``F.copy`` of the original link's, so ``backward`` from the gathered output leaves the
gradients of the whole batch in the original link's parameters, ready for its optimizer.

The pieces are public too, as in ``torch.nn.parallel``: :func:`replicate`,
:func:`scatter`, :func:`parallel_apply` and :func:`gather`.

>>> import numpy as np
>>> from cvzoo.core import links as L
>>> link = L.Linear(3, 2)
>>> x = np.ones((4, 3), np.float32)
>>> y = data_parallel(link, x, ['cpu', 'cpu'])
>>> y.shape
(4, 2)
>>> bool(np.allclose(y.array, link(x).array))
True

Batch-norm statistics: each replica normalises its own part of the batch. The replica on
the original link's device shares its running averages, so those are updated from that
part alone; the other replicas' updates are dropped (as in PyTorch's ``DataParallel``).
"""

import threading

from cvzoo.core import backend
from cvzoo.core.functions.array import concat as concat_module
from cvzoo.core.functions.array import copy as copy_module
from cvzoo.core.functions.array import split_axis as split_module


def _devices(devices):
    if devices is None:
        devices = backend.try_all_gpus()
    devices = [backend.get_device(d) for d in devices]
    if not devices:
        raise ValueError('devices: expected at least one device, got none')
    return devices


def replicate(link, devices):
    """One replica of ``link`` per device, whose parameters are differentiable copies.

    Args:
        link (Link): the original; its parameters must be initialised.
        devices: a list of device specs (``'cuda:0'``, ``1``, ``Device``...).

    Returns:
        list of Link: replica ``i`` lives on ``devices[i]``. Backward through a replica's
        output adds gradients into the original parameters.
    """
    devices = _devices(devices)
    for path, param in link.namedparams():
        if not param.is_initialized:
            raise ValueError(f'replicate: parameter {path} is not initialised yet; run one '
                             'forward pass (or give in_channels) before replicating')
    return [_replica(link, device) for device in devices]


def _replica(link, device):
    replica = link.copy(mode='share')
    for original, copied in zip(link.links(), replica.links()):
        copied._device = device
        for name in original._params:
            param = original.__dict__[name]
            # a non-leaf Variable in the parameter's place: its creator is the copy
            copied.__dict__[name] = copy_module.copy(param, device)
        if device != original.device:
            for name in original._persistent:
                value = original.__dict__[name]
                if hasattr(value, 'shape') and hasattr(value, 'dtype'):
                    copied.__dict__[name] = backend.to_device(value, device)
    return replica


def scatter(x, devices):
    """Split ``x`` along the batch axis into one part per device, each sent there.

    Args:
        x: a Variable or array, or a tuple/list of them (each split the same way).
        devices: a list of device specs.

    Returns:
        list: one entry per part (at most ``len(devices)``: a batch smaller than the
        number of devices gives fewer parts), differentiable.
    """
    devices = _devices(devices)
    if isinstance(x, (tuple, list)):
        columns = [scatter(item, devices) for item in x]
        return [tuple(parts) for parts in zip(*columns)]
    batch = len(x)
    n_part = min(len(devices), batch) or 1
    bounds = [batch * i // n_part for i in range(1, n_part)]
    parts = split_module.split_axis(x, bounds, axis=0) if n_part > 1 else (x,)
    return [copy_module.copy(part, device) for part, device in zip(parts, devices)]


def gather(outputs, device):
    """Concatenate per-device outputs along the batch axis on ``device``.

    Args:
        outputs: a list with one Variable (or tuple of Variables) per replica.
        device: where the result goes.

    Returns:
        Variable, or a tuple of them when the replicas returned tuples.
    """
    device = backend.get_device(device)
    if isinstance(outputs[0], (tuple, list)):
        return tuple(gather([out[i] for out in outputs], device)
                     for i in range(len(outputs[0])))
    moved = [copy_module.copy(out, device) for out in outputs]
    with device:
        return moved[0] if len(moved) == 1 else concat_module.concat(moved, axis=0)


def parallel_apply(replicas, inputs):
    """Call ``replicas[i](inputs[i])`` in one thread per replica, its device current.

    Args:
        replicas (list of Link): e.g. from :func:`replicate`.
        inputs (list): one argument, or one tuple of arguments, per replica.

    Returns:
        list: the outputs, in order. An exception in a thread is raised here.
    """
    if len(replicas) != len(inputs):
        raise ValueError(f'parallel_apply: {len(replicas)} replicas but {len(inputs)} inputs')
    results = [None] * len(replicas)
    errors = [None] * len(replicas)

    def run(i):
        args = inputs[i] if isinstance(inputs[i], tuple) else (inputs[i],)
        try:
            with replicas[i].device:
                results[i] = replicas[i](*args)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            errors[i] = exc

    if len(replicas) == 1:
        run(0)
    else:
        threads = [threading.Thread(target=run, args=(i,), name=f'cvzoo-replica-{i}')
                   for i in range(len(replicas))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results


def data_parallel(link, x, devices=None, output_device=None):
    """Run ``link`` on ``x`` with the batch split over ``devices``; differentiable.

    Args:
        link (Link): the model (its parameters initialised).
        x: a Variable or array (or a tuple of them, passed as several arguments), batch
            on axis 0.
        devices: device specs; default every GPU (:func:`backend.try_all_gpus`).
        output_device: where the output is gathered; default ``devices[0]``.

    Returns:
        Variable (or tuple of them): the output for the whole batch, equal to
        ``link(x)`` up to rounding (and batch-norm statistics in training mode).
    """
    devices = _devices(devices)
    output_device = devices[0] if output_device is None else backend.get_device(output_device)
    replicas = replicate(link, devices)
    parts = scatter(x, devices)
    outputs = parallel_apply(replicas[:len(parts)], parts)
    return gather(outputs, output_device)

