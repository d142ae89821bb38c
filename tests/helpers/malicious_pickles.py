"""Checkpoints whose pickle tries to run code or to BUILD onto an allowed global, for the
tests of the restricted .pth reader (tests/models/weights/converters, tests/faults)."""

import builtins
import os
import pickle
import subprocess

from tests.helpers import pth_writer


class RunsCode:
    """Unpickles as ``func(arg)``: what a malicious checkpoint does."""

    def __init__(self, func, arg):
        self.func, self.arg = func, arg

    def __reduce__(self):
        return self.func, (self.arg,)


def code_payloads(canary):
    """name -> pickle bytes that create the file ``canary`` when unpickled."""
    command = f'touch {canary}'
    code = f'open({str(canary)!r}, "w").close()'
    return {
        'os_system': pickle.dumps({'w': RunsCode(os.system, command)}, protocol=2),
        'builtins_eval': pickle.dumps({'w': RunsCode(builtins.eval, code)}, protocol=2),
        'builtins_exec': pickle.dumps({'w': RunsCode(builtins.exec, code)}, protocol=2),
        'subprocess_call': pickle.dumps({'w': RunsCode(subprocess.call,
                                                       ['touch', str(canary)])}, protocol=4),
    }


def _str_op(text):
    data = text.encode()
    return b'X' + len(data).to_bytes(4, 'little') + data


# BUILD (``b``) onto an allowed global: the state a file tries to give the reader's stand-in
BUILD_PAYLOADS = {
    'storage_dict': b'ctorch\nFloatStorage\n}' + _str_op('name') + _str_op('int32') + b'sb.',
    'storage_slots': (b'ctorch\nFloatStorage\nN}' + _str_op('name') + _str_op('int32')
                      + b's\x86b.'),
    'dtype': b'ctorch\nfloat32\n}' + _str_op('name') + _str_op('int64') + b'sb.',
    'function': (b'ctorch._utils\n_rebuild_tensor_v2\n}' + _str_op('x') + _str_op('y')
                 + b'sb.'),
    'tensor_type': b'ctorch\nTensor\nN}' + _str_op('x') + _str_op('y') + b's\x86b.',
}


def write_raw_pickle(path, data, layout):
    """Write the pickle bytes ``data`` as a checkpoint of ``layout`` 'zip' or 'legacy'."""
    if layout == 'zip':
        pth_writer.write_zip(path, None, data_pkl=data)
        return
    headers = b''.join(pickle.dumps(h, protocol=2) for h in (
        pth_writer.LEGACY_MAGIC, 1001, {'little_endian': True}))
    path.write_bytes(headers + data + pickle.dumps([], protocol=2))


def nested_lists(depth):
    """Pickle bytes of a list nested ``depth`` deep: ``depth`` empty lists pushed, then
    each appended to the one below it."""
    return b'\x80\x02' + b']' * depth + b'a' * (depth - 1) + b'.'


def cyclic_list():
    """Pickle bytes of a list that contains itself (memo 0 appended to itself)."""
    return b'\x80\x02]q\x00h\x00a.'


def doubling_lists(depth):
    """Pickle bytes of lists L0 = [L1, L1], L1 = [L2, L2], ...: ``depth`` levels, 2 ** depth
    paths to the innermost list, each level stored once (memo)."""
    out = bytearray(b'\x80\x02]q\x00')
    for level in range(1, depth + 1):
        out += b'(h' + bytes([level - 1]) + b'h' + bytes([level - 1]) + b'lq' + bytes([level])
    return bytes(out + b'.')


def memo_index(index):
    """Pickle bytes that store None under the memo ``index`` (LONG_BINPUT); the C
    unpickler grows and clears its memo table to twice that many entries."""
    return b'\x80\x02Nr' + index.to_bytes(4, 'little') + b'}.'
