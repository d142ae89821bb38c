"""A temporary cap on the test process's address space (Linux).

A test that feeds a hostile file (one that declares a huge array) must not exhaust a
shared machine when the code under test is wrong and allocates what the file declares:
under the cap such an allocation fails at once with MemoryError, which fails the test.
"""

import contextlib
import os
import resource


def _mapped_bytes():
    """Bytes of address space the process maps now."""
    with open('/proc/self/statm') as file:
        return int(file.read().split()[0]) * os.sysconf('SC_PAGE_SIZE')


@contextlib.contextmanager
def address_space_cap(extra_bytes=256 << 20):
    """Within the block, the process may map at most ``extra_bytes`` more than now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _mapped_bytes() + extra_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
