"""NcclCommunicator: GPU all-reduce and broadcast through NCCL; MPI for everything else.

Written against CuPy's NCCL binding (reached only through ``backend.nccl_module()``).
Each NCCL call is queued on CuPy's current stream of the rank's GPU, where the kernels
before and after it run: in a block ``with stream:`` (``Device.stream()``) it goes on that
stream, and while a stream captures a CUDA graph (``cvzoo.core.cuda_graph``) on the
capturing one, so the graph holds the all-reduce and each replay runs it (NCCL >= 2.9
captures its collectives). The test suite runs it on the CuPy stand-in, whose NCCL calls
go through MPI on the real memory of the fake GPUs (device placement, the rank's GPU
current, dtypes, the stream, the mean, and calls recorded in a capture then run at each
launch are checked there); NCCL itself is proved only by tools/gpu_check.sh on real GPUs.
"""

import numpy

from cvzoo.core import backend
from cvzoo.core.communicators import mpi_communicator

_NCCL_DTYPES = {numpy.dtype(numpy.float16): 'NCCL_FLOAT16',
                numpy.dtype(numpy.float32): 'NCCL_FLOAT32',
                numpy.dtype(numpy.float64): 'NCCL_FLOAT64'}


class NcclCommunicator(mpi_communicator.MpiCommunicator):
    """Like MpiCommunicator, but gradients and parameters stay on the GPU.

    The communicator makes this rank's own GPU (``cuda:<intra_rank>``, :attr:`device`)
    current before it creates the NCCL communicator, so that no two ranks of a machine
    share a GPU; put the model there (``model.to_device(comm.device)``). Rank 0 makes the
    NCCL id and MPI broadcasts it.

    Args:
        mpi_comm: an mpi4py communicator (default ``MPI.COMM_WORLD``).
        allreduce_grad_dtype: None or ``numpy.float16`` (gradients cast for the
            all-reduce, then cast back).
    """

    def __init__(self, mpi_comm=None, allreduce_grad_dtype=None):
        super().__init__(mpi_comm, allreduce_grad_dtype)
        self.nccl = backend.nccl_module()
        self.device = self.rank_device('cuda')
        unique_id = self.nccl.get_unique_id() if self.rank == 0 else None
        unique_id = self.bcast_obj(unique_id)
        with self.device:
            self.nccl_comm = self.nccl.NcclCommunicator(self.size, unique_id, self.rank)

    def _dtype_code(self, dtype):
        if numpy.dtype(dtype) not in _NCCL_DTYPES:
            raise TypeError(f'nccl: expected a float16/32/64 array, got {dtype}')
        return getattr(self.nccl, _NCCL_DTYPES[numpy.dtype(dtype)])

    def bcast_data(self, model):
        """Overwrite every initialised parameter with rank 0's value, on the GPU."""
        with self.device:
            stream = backend.current_stream_handle()
            for _, param in mpi_communicator._sorted_params(model, with_grad=False):
                array = param.array
                self.nccl_comm.bcast(array.data.ptr, array.size,
                                     self._dtype_code(array.dtype), 0, stream)

    def allreduce_grad(self, model, zero_fill=False):
        """Replace every gradient by its mean over the ranks, on the GPU.

        float16 gradients are divided by the number of ranks before they are summed (a
        sum of float16 gradients overflows to inf long before their mean does); other
        dtypes are summed, then divided, in their own precision.
        """
        with self.device:
            if zero_fill:
                for _, param in mpi_communicator._sorted_params(model, with_grad=False):
                    if param.grad is None:
                        param.grad = param.xp.zeros_like(param.array)
            params = [p for _, p in mpi_communicator._sorted_params(model, with_grad=True)]
            if not params:
                return
            xp = params[0].xp
            dtype = numpy.dtype(self.allreduce_grad_dtype
                                or numpy.result_type(*[p.grad.dtype for p in params]))
            buffer = xp.concatenate([p.grad.ravel() for p in params])
            if dtype == numpy.float16:
                buffer = (buffer.astype(numpy.float32) / self.size).astype(dtype)
            else:
                buffer = buffer.astype(dtype, copy=False)
            self.nccl_comm.allReduce(buffer.data.ptr, buffer.data.ptr, buffer.size,
                                     self._dtype_code(dtype), self.nccl.NCCL_SUM,
                                     backend.current_stream_handle())
            if dtype != numpy.float16:
                buffer /= self.size
            offset = 0
            for param in params:
                part = buffer[offset:offset + param.grad.size].reshape(param.grad.shape)
                param.grad[...] = part.astype(param.grad.dtype, copy=False)
                offset += param.grad.size

    def finalize(self):
        """Destroy the NCCL communicator, then free the MPI ones."""
        if self.nccl_comm is not None:
            self.nccl_comm.destroy()
            self.nccl_comm = None
        super().finalize()
