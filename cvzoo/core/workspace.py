"""Scratch memory that large, short-lived NumPy temporaries reuse from call to call.

A convolution's patch matrix is the biggest temporary of a forward or backward pass
(58 MB for ResNet-50's first 3x3 layers at batch 8) and lives only until the matmul
that reads it returns. Allocated afresh, such an array costs more than its copy: glibc
serves allocations above 32 MB with new pages from the kernel, which zeroes and maps
them on first touch, and touching them from two threads makes the threads queue on the
process's page table. Measured on the 2-core machine: a copy into fresh memory ran at
4.5 GB/s, into memory written before at 12 GB/s (docs/benchmarks.md, "Core engine").

``scratch(name, shape, dtype)`` hands out an array over a buffer kept per thread and
per name, grown when a larger one is asked for and otherwise reused; a temporary above
MAX_BYTES gets a new array instead, since keeping it would hold too much. An array it
returns is valid only until the next ``scratch`` call with the same name on the same
thread: callers use it for a temporary that nothing keeps (the patch matrix a matmul
reads and drops). ``release()`` frees the calling thread's buffers.

On a GPU, whose memory pool already reuses blocks, ``scratch`` is a plain ``empty``.
"""

import threading

import numpy

# Temporaries larger than this (128 MiB) get a new array each time: keeping them between
# calls would hold too much memory. A float32 patch matrix stays below (correlation.py
# cuts larger ones into bands or chunks); a float64 one may reach twice this.
MAX_BYTES = 1 << 27

_local = threading.local()


def scratch(name, shape, dtype, xp=numpy):
    """An uninitialised array for a temporary that does not outlive the caller's use.

    Args:
        name (str): the buffer: temporaries alive at the same time need different names.
        shape (tuple of int): the array's shape.
        dtype (dtype): its dtype.
        xp (module): the array module (backend.get_array_module); any other than NumPy
            gives its plain ``xp.empty(shape, dtype)``.

    Returns:
        array: C-contiguous, valid until the next ``scratch(name, ...)`` on this thread;
        a new array when larger than MAX_BYTES.
    """
    dtype = numpy.dtype(dtype)
    nbytes = dtype.itemsize
    for size in shape:
        nbytes *= int(size)
    if xp is not numpy or nbytes > MAX_BYTES:
        return xp.empty(shape, dtype=dtype)
    buffers = _buffers()
    buffer = buffers.get(name)
    if buffer is None or buffer.nbytes < nbytes:
        buffers.pop(name, None)  # free the old one before allocating the larger one
        buffer = numpy.empty(nbytes, dtype=numpy.uint8)
        buffers[name] = buffer
    return buffer[:nbytes].view(dtype).reshape(shape)


def release():
    """Free the scratch buffers of the calling thread."""
    _buffers().clear()


def held_bytes():
    """Bytes of scratch memory the calling thread holds."""
    return sum(buffer.nbytes for buffer in _buffers().values())


def _buffers():
    buffers = getattr(_local, 'buffers', None)
    if buffers is None:
        buffers = _local.buffers = {}
    return buffers

