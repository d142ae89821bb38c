"""cuDNN plans cached per key: one graph built and one engine chosen per shape/dtype/stride.

A key names the operation, the device, each operand's (shape, strides, dtype), the
operation's parameters and the settings that change the engine choice
(``cudnn_benchmark``, ``cudnn_deterministic``, ``allow_tf32``). The first call with a key
builds the graph with heuristics mode A (then FALLBACK); with ``cudnn_benchmark`` it
builds every plan, times each once on the call's own buffers and keeps the fastest, as
``torch.backends.cudnn.benchmark``. A graph cuDNN refuses (``check_support`` or
``build_plans`` fails; ``validate`` raises ValueError) is remembered as None and the caller falls back to im2col/CuPy.

Execution: the workspace is a uint8 array of the current device's CuPy pool, and the
device's cuDNN handle is set to CuPy's current stream before each call, so a call in a
``cupy.cuda.Stream`` block or a CUDA-graph capture goes where the surrounding work goes.
"""

import collections

import numpy

from cvzoo.core import backend
from cvzoo.core.config import config
from cvzoo.core.cudnn import availability

_plans = {}  # key -> Plan, or None for a graph cuDNN refuses
_handles = {}  # device id -> cuDNN handle
refusals = {}  # key -> the error text of a refused graph (for diagnostics)
counts = collections.Counter()  # 'hits', 'misses', 'benchmarks', 'refused', 'executions'


def clear():
    """Forget every plan and handle (tests; a new frontend module)."""
    _plans.clear()
    _handles.clear()
    refusals.clear()
    counts.clear()


def spec(array):
    """(shape, strides in elements, dtype) of a device array: its part of a plan key."""
    itemsize = array.dtype.itemsize
    return (tuple(array.shape), tuple(s // itemsize for s in array.strides),
            numpy.dtype(array.dtype).str)


def data_type(cudnn, dtype):
    """The frontend's data_type for a NumPy dtype (float16 or float32)."""
    return {numpy.dtype(numpy.float16): cudnn.data_type.HALF,
            numpy.dtype(numpy.float32): cudnn.data_type.FLOAT}[numpy.dtype(dtype)]


def tensor(graph, cudnn, name, array):
    """A graph tensor describing ``array``'s shape, strides and dtype."""
    _, strides, _ = spec(array)
    return graph.tensor(name=name, dim=list(array.shape), stride=list(strides),
                        data_type=data_type(cudnn, array.dtype))


def set_output(cudnn, graph_tensor, array):
    """Mark ``graph_tensor`` an output with ``array``'s shape, strides and dtype."""
    _, strides, _ = spec(array)
    graph_tensor.set_output(True).set_dim(list(array.shape)).set_stride(list(strides))
    graph_tensor.set_data_type(data_type(cudnn, array.dtype))


class Plan:
    """A built graph, its tensors by name and the index of the plan it runs (None: the
    plan the heuristics chose)."""

    def __init__(self, graph, tensors, index):
        self.graph = graph
        self.tensors = tensors
        self.index = index

    def execute(self, buffers):
        """Run the plan on ``buffers`` (name -> device array or host scalar array)."""
        counts['executions'] += 1
        run(self.graph, self.tensors, buffers, self.index)


def _handle(cudnn, device_id):
    if device_id not in _handles:
        _handles[device_id] = cudnn.create_handle()
    return _handles[device_id]


def current_handle(cupy):
    """The current device's cuDNN handle, set to CuPy's current stream."""
    cudnn = availability.frontend()
    handle = _handle(cudnn, cupy.cuda.Device().id)
    cudnn.set_stream(handle=handle, stream=cupy.cuda.get_current_stream().ptr)
    return handle


def _pointer(value):
    """The address of a device array, or of a host scalar passed by value."""
    if isinstance(value, numpy.ndarray):
        if value.size != 1:
            raise TypeError('cvzoo.core.cudnn: only pass-by-value scalars may be host arrays')
        return value.ctypes.data
    return value.data.ptr


def run(graph, tensors, buffers, index):
    """Execute plan ``index`` of ``graph`` (None: the heuristics' choice) on the current
    stream with a workspace from the current device's pool."""
    cupy = backend.get_array_module(*(b for b in buffers.values()
                                      if not isinstance(b, numpy.ndarray)))
    handle = current_handle(cupy)
    size = (graph.get_workspace_size() if index is None
            else graph.get_workspace_size_plan_at_index(index))
    workspace = cupy.empty((max(size, 1),), dtype=numpy.uint8)
    pack = {tensors[name]: _pointer(value) for name, value in buffers.items()}
    if index is None:
        graph.execute(pack, workspace.data.ptr, handle=handle)
    else:
        graph.execute_plan_at_index(pack, workspace.data.ptr, index, handle=handle)


def key(operation, *parts):
    """The plan key of ``operation`` on the current device with these parts and settings."""
    cupy = backend.get_array_module(*(p for p in parts if hasattr(p, 'strides')
                                      and not isinstance(p, numpy.ndarray)))
    parts = tuple(spec(p) if hasattr(p, 'strides') else p for p in parts)
    return (operation, cupy.cuda.Device().id, parts, bool(config.cudnn_benchmark),
            bool(config.cudnn_deterministic), bool(config.allow_tf32))


def get(plan_key, make_graph, buffers, dtype):
    """The cached Plan of ``plan_key``, built on a miss by ``make_graph(cudnn, graph)``.

    ``make_graph`` adds the operation to an empty graph and returns its tensors by name
    (the names of ``buffers``). Returns None when cuDNN refuses the graph.
    """
    if plan_key in _plans:
        counts['hits'] += 1
        return _plans[plan_key]
    counts['misses'] += 1
    cudnn = availability.frontend()
    cupy = backend.get_array_module(*(b for b in buffers.values()
                                      if not isinstance(b, numpy.ndarray)))
    graph = cudnn.pygraph(io_data_type=data_type(cudnn, dtype),
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT,
                          handle=_handle(cudnn, cupy.cuda.Device().id))
    try:
        tensors = make_graph(cudnn, graph)
        _build(cudnn, graph, dtype)
    except (ValueError, RuntimeError,
            getattr(cudnn, 'cudnnGraphNotSupportedError', RuntimeError)) as error:
        # NOTE: the frontend raises ValueError (std::invalid_argument) for a graph it cannot
        # validate, cudnnGraphNotSupportedError when no engine takes it
        counts['refused'] += 1
        refusals[plan_key] = str(error)
        _plans[plan_key] = None
        return None
    index = _fastest(graph, tensors, buffers, cupy) if config.cudnn_benchmark else None
    _plans[plan_key] = Plan(graph, tensors, index)
    return _plans[plan_key]


def _build(cudnn, graph, dtype):
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    notes = []
    if config.cudnn_deterministic:
        notes.append(cudnn.numerical_note.NONDETERMINISTIC)
    if not config.allow_tf32 and numpy.dtype(dtype) == numpy.float32:
        # NOTE: a float32 engine with the TENSOR_CORE note computes in TF32
        notes.append(cudnn.numerical_note.TENSOR_CORE)
    if notes:
        graph.deselect_numeric_notes(notes)
    graph.check_support()
    if config.cudnn_benchmark:
        graph.build_plans(cudnn.build_plan_policy.ALL)
    else:
        graph.build_plans(cudnn.build_plan_policy.HEURISTICS_CHOICE)


def _fastest(graph, tensors, buffers, cupy):
    """Index of the fastest plan, each run once on ``buffers`` between two events."""
    counts['benchmarks'] += 1
    best, best_ms = 0, None
    for index in range(graph.get_execution_plan_count()):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        try:
            run(graph, tensors, buffers, index)
        except (RuntimeError, ValueError):  # a plan that did not build
            continue
        end.record()
        end.synchronize()
        elapsed = cupy.cuda.get_elapsed_time(start, end)
        if best_ms is None or elapsed < best_ms:
            best, best_ms = index, elapsed
    return best
