"""MpiCommunicator: parameters, gradients and Python objects exchanged over MPI."""

import numpy

from cvzoo.core import backend


def _import_mpi():
    try:
        from mpi4py import MPI  # optional dependency (the mpi extra)
    except ImportError as exc:
        raise RuntimeError("the 'mpi' communicator needs mpi4py and an MPI library; "
                           "install them with: pip install 'cvzoo[mpi]'") from exc
    return MPI


def _sorted_params(model, with_grad):
    params = sorted(model.namedparams(include_uninit=False), key=lambda item: item[0])
    return [(path, p) for path, p in params if not with_grad or p.grad is not None]


class MpiCommunicator:
    """Collective operations between the processes of an MPI job.

    Arrays travel through host memory (GPU arrays are copied to the host and back); the
    NCCL communicator does GPU all-reduce instead.

    Args:
        mpi_comm: an mpi4py communicator (default ``MPI.COMM_WORLD``).
        allreduce_grad_dtype: None (the gradients' own dtype) or ``numpy.float16`` to
            send gradients as float16 (the mean is formed in float32 here).

    Attributes:
        rank, size (int): this process's rank and the number of processes.
        intra_rank, intra_size (int): the same within this machine (use intra_rank to
            pick the GPU: ``'cuda:%d' % comm.intra_rank``).
        inter_rank, inter_size (int): this machine's index and the number of machines.
    """

    def __init__(self, mpi_comm=None, allreduce_grad_dtype=None):
        MPI = _import_mpi()
        self.mpi = MPI
        self.mpi_comm = MPI.COMM_WORLD if mpi_comm is None else mpi_comm
        self.allreduce_grad_dtype = (None if allreduce_grad_dtype is None
                                     else numpy.dtype(allreduce_grad_dtype))
        self.rank = self.mpi_comm.Get_rank()
        self.size = self.mpi_comm.Get_size()
        self._intra = self.mpi_comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.intra_rank = self._intra.Get_rank()
        self.intra_size = self._intra.Get_size()
        self._inter = self.mpi_comm.Split(self.intra_rank, self.rank)
        self.inter_rank = self._inter.Get_rank()
        self.inter_size = self._inter.Get_size()

    def rank_device(self, device):
        """This rank's device for a requested one, made current before anything is made.

        A GPU request (``'cuda'``, ``'cuda:0'``, any ``cuda:N``) becomes this rank's own
        GPU, ``cuda:<intra_rank>``; the CPU stays the CPU.

        Returns:
            Device: the device this rank trains on.
        """
        device = backend.get_device(device) if str(device) != 'cuda' else None
        if device is not None and device.kind == 'cpu':
            return device
        device = backend.Device(f'cuda:{self.intra_rank}')
        return device.use()

    # --- Python objects ---

    def bcast_obj(self, obj, root=0):
        """Return ``obj`` of rank ``root`` on every rank (pickled)."""
        return self.mpi_comm.bcast(obj, root=root)

    def gather_obj(self, obj, root=0):
        """Return the list of every rank's ``obj`` on ``root`` (None elsewhere)."""
        return self.mpi_comm.gather(obj, root=root)

    def allreduce_obj(self, obj):
        """Return the sum of every rank's ``obj`` (numbers or arrays) on every rank."""
        return self.mpi_comm.allreduce(obj, op=self.mpi.SUM)

    def barrier(self):
        """Wait until every rank gets here."""
        self.mpi_comm.Barrier()

    # --- parameters and gradients ---

    def bcast_data(self, model):
        """Overwrite every initialised parameter with rank 0's value (in place)."""
        for _, param in _sorted_params(model, with_grad=False):
            host = numpy.ascontiguousarray(backend.to_numpy(param.array))
            self.mpi_comm.Bcast(host, root=0)
            with backend.using_device_of(param.array):
                param.array[...] = backend.to_device(host, param.device)

    def allreduce_grad(self, model, zero_fill=False):
        """Replace every gradient by its mean over the ranks (in place).

        Args:
            model: the Link whose parameters' gradients are averaged.
            zero_fill (bool): treat a missing gradient as zeros (every rank must then
                have the same initialised parameters); False skips parameters without a
                gradient, and every rank must skip the same ones.
        """
        if zero_fill:
            for _, param in _sorted_params(model, with_grad=False):
                if param.grad is None:
                    with backend.using_device_of(param.array):
                        param.grad = param.xp.zeros_like(param.array)
        params = [p for _, p in _sorted_params(model, with_grad=True)]
        if not params:
            return
        dtype = self.allreduce_grad_dtype or numpy.result_type(*[p.grad.dtype for p in params])
        # one copy to the host and one back, whatever the number of parameters
        with backend.using_device_of(params[0].grad):
            flat = params[0].xp.concatenate(
                [p.grad.ravel().astype(dtype, copy=False) for p in params])
        buffer = numpy.ascontiguousarray(backend.to_numpy(flat))
        self._allreduce_mean(buffer)
        with backend.using_device_of(params[0].grad):
            flat = backend.to_device(buffer, params[0].device)
            offset = 0
            for param in params:
                part = flat[offset:offset + param.grad.size].reshape(param.grad.shape)
                param.grad[...] = part.astype(param.grad.dtype, copy=False)
                offset += param.grad.size

    def _allreduce_mean(self, buffer):
        """Sum ``buffer`` over the ranks in place and divide by the size."""
        if buffer.dtype == numpy.float16:
            # NOTE: MPI has no float16 sum; send the 16-bit patterns, sum them as float32.
            parts = numpy.empty((self.size,) + buffer.shape, numpy.float16)
            self.mpi_comm.Allgather(buffer.view(numpy.uint16), parts.view(numpy.uint16))
            buffer[...] = parts.astype(numpy.float32).sum(axis=0) / self.size
            return
        self.mpi_comm.Allreduce(self.mpi.IN_PLACE, buffer, op=self.mpi.SUM)
        buffer /= self.size

    # --- communicators ---

    def split(self, color, key):
        """A new communicator of the ranks with the same ``color``, ordered by ``key``."""
        return type(self)(self.mpi_comm.Split(color, key), self.allreduce_grad_dtype)

    def finalize(self):
        """Free the communicators this object created (not COMM_WORLD)."""
        for comm in (self._intra, self._inter):
            if comm is not None:
                comm.Free()
        self._intra = self._inter = None
        if self.mpi_comm is not self.mpi.COMM_WORLD:
            self.mpi_comm.Free()
            self.mpi_comm = None
