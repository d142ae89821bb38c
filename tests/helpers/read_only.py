"""Make folders really read-only for a test, also when the tests run as root.

``chmod a-w`` does not stop root: its CAP_DAC_OVERRIDE capability writes past the
permission bits. As root, :func:`read_only` also drops that capability from the calling
thread's effective set (it stays in the permitted set, and comes back afterwards), so the
kernel checks the bits as it would for any user. Where that is not possible the test is
skipped: a read-only test that cannot fail would prove nothing.
"""

import contextlib
import ctypes
import os
import stat

import pytest

_CAPABILITY_VERSION_3 = 0x20080522
_CAP_DAC_OVERRIDE = 1
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


class _Header(ctypes.Structure):
    _fields_ = [('version', ctypes.c_uint32), ('pid', ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [('effective', ctypes.c_uint32), ('permitted', ctypes.c_uint32),
                ('inheritable', ctypes.c_uint32)]


def _capabilities():
    """(libc, header, data) of this thread's capabilities; skips the test when unreadable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header, data = _Header(_CAPABILITY_VERSION_3, 0), (_Data * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), 'capget')
    except (OSError, AttributeError) as exc:
        pytest.skip(f'running as root and cannot drop CAP_DAC_OVERRIDE ({exc})')
    return libc, header, data


def _set_effective(libc, header, data, effective):
    data[0].effective = effective
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), 'capset')


@contextlib.contextmanager
def _permission_bits_bind_root():
    if os.geteuid() != 0:
        yield
        return
    libc, header, data = _capabilities()
    saved = data[0].effective
    try:
        _set_effective(libc, header, data, saved & ~(1 << _CAP_DAC_OVERRIDE))
    except OSError as exc:
        pytest.skip(f'running as root and cannot drop CAP_DAC_OVERRIDE ({exc})')
    try:
        yield
    finally:
        _set_effective(libc, header, data, saved)


def _chmod_tree(root, change):
    """chmod ``root`` and everything below it (links aside) to ``change(mode)``."""
    for folder, dirs, names in os.walk(root):
        for path in [folder] + [os.path.join(folder, name) for name in names]:
            if not os.path.islink(path):
                os.chmod(path, change(os.stat(path).st_mode))


@contextlib.contextmanager
def read_only(*folders):
    """Inside the block, nothing in ``folders`` (files and sub-folders) can be written,
    created, renamed or removed by this thread, as for another user's read-only folder.
    The write bits come back afterwards, so that pytest can remove the tree."""
    for folder in folders:
        _chmod_tree(folder, lambda mode: mode & ~_WRITE_BITS)
    try:
        with _permission_bits_bind_root():
            yield
    finally:
        for folder in folders:
            _chmod_tree(folder, lambda mode: mode | stat.S_IWUSR)
