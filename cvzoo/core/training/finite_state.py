"""Whether a training state (parameters and optimizer state) is finite, read cheaply.

FailOnNonNumber checks the parameters after each iteration with it, and every snapshot
checks what it is about to write, so that no snapshot holds NaN or inf.
"""

from cvzoo.core import backend


class NonFiniteError(RuntimeError):
    """Training produced a NaN or infinite loss, parameter or optimizer state."""


def optimizer_arrays(optimizers, include_state=True):
    """(name, array) of every initialised parameter of ``optimizers`` and, with
    ``include_state``, of its update rule's state (Adam's ``m`` and ``v``, ...).

    Args:
        optimizers (dict): {name: optimizer}, as ``updater.get_all_optimizers()`` gives.

    Returns:
        list of tuple: names such as ``"parameter /conv1/W of optimizer 'main'"``.
    """
    named = []
    for name, optimizer in optimizers.items():
        for path, param in optimizer.target.namedparams(include_uninit=False):
            named.append((f'parameter {path} of optimizer {name!r}', param.array))
            rule = param.update_rule
            if include_state and rule is not None and rule.state:
                named += [(f'state {key!r} of parameter {path} of optimizer {name!r}', array)
                          for key, array in sorted(rule.state.items())]
    return named


def link_arrays(link):
    """(name, array) of every initialised parameter of ``link``."""
    return [(f'parameter {path}', param.array)
            for path, param in link.namedparams(include_uninit=False)]


def first_non_finite(named):
    """The name of the first of ``named`` ((name, array) pairs) holding NaN or inf, or None.

    Only floating-point arrays count. When all are finite this costs one host sync per
    device (the arrays' flags are stacked on their device first); only after a failure is
    each array read to find the first culprit.
    """
    named = [(name, array) for name, array in named
             if getattr(array, 'dtype', None) is not None and array.dtype.kind in 'fc']
    if _all_finite([array for _, array in named]):
        return None
    for name, array in named:
        with backend.using_device_of(array):
            if not bool(backend.get_array_module(array).isfinite(array).all()):
                return name
    return None


def _all_finite(arrays):
    """Whether every array is finite, read with one host sync per device."""
    by_device = {}
    for array in arrays:
        by_device.setdefault(backend.get_device_from_array(array), []).append(array)
    for device, group in by_device.items():
        with device:
            flags = device.xp.stack([device.xp.isfinite(a).all() for a in group])
            if not bool(flags.all()):
                return False
    return True
