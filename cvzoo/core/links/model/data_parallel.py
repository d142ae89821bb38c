"""DataParallel: a link whose batch is split over several devices (PyTorch's nn.DataParallel)."""

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core import data_parallel as data_parallel_module
from cvzoo.core.links import link


class DataParallel(link.Chain):
    """Run ``module`` with each batch split over ``device_ids``, as ``nn.DataParallel``.

    Calling it is :func:`cvzoo.core.data_parallel.data_parallel`: the batch (axis 0 of
    each positional argument) is split over the devices, one replica of the module runs
    per device in its own thread, and the outputs are gathered on ``output_device``.
    It is differentiable: backward leaves the whole batch's gradients in the module's
    own parameters. The module is the child ``module``, so the parameters of the
    wrapper are the module's (paths ``/module/...``): an optimizer set up on either
    updates the same arrays. Put the module on ``device_ids[0]`` (``to_device``), as
    PyTorch asks; it then holds the main copy of the parameters.

    Args:
        module (Link): the model; its parameters must be initialised (run one forward
            pass first for a layer whose input size is inferred).
        device_ids (list or None): device specs (``'cuda:0'``, ``1``, ``Device``...);
            default every GPU (``backend.try_all_gpus()``, the CPU when there is none).
        output_device: where the output is gathered; default ``device_ids[0]``.

    Attributes:
        module (Link): the wrapped link.
        device_ids (list of Device): the devices the batch is split over.
        output_device (Device): where outputs are gathered.

    >>> import numpy as np
    >>> from cvzoo.core import links as L
    >>> net = L.Linear(3, 2)
    >>> model = DataParallel(net, device_ids=['cpu', 'cpu'])
    >>> y = model(np.ones((5, 3), np.float32))
    >>> y.shape, [p is q for p, q in zip(model.params(), net.params())]
    ((5, 2), [True, True])
    """

    def __init__(self, module, device_ids=None, output_device=None):
        super().__init__()
        if not isinstance(module, link.Link):
            raise TypeError(f'DataParallel: module must be a Link, got {type(module).__name__}')
        devices = backend.try_all_gpus() if device_ids is None else list(device_ids)
        if not devices:
            raise errors.UsageError('DataParallel: device_ids must name at least one device, got '
                             'an empty list')
        self.device_ids = [backend.get_device(device) for device in devices]
        self.output_device = backend.get_device(
            self.device_ids[0] if output_device is None else output_device)
        with self.init_scope():
            self.module = module
        self._device = module.device

    def forward(self, *inputs):
        """``module(*inputs)`` with the batch split over :attr:`device_ids`."""
        if not inputs:
            raise TypeError('DataParallel: expected at least one input to split')
        x = inputs[0] if len(inputs) == 1 else inputs
        return data_parallel_module.data_parallel(self.module, x, self.device_ids,
                                                  self.output_device)

    def _repr_args(self):
        return f"device_ids={[str(d) for d in self.device_ids]}"
