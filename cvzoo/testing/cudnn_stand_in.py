"""A fake ``cudnn`` frontend module for the CuPy stand-in: its graphs compute with NumPy.

``make_module()`` returns a module with the part of ``nvidia-cudnn-frontend``'s API that
``cvzoo.core.cudnn`` uses (``pygraph`` with ``tensor``, ``conv_fprop``, ``conv_dgrad``,
``conv_wgrad``, ``batchnorm``, ``batchnorm_backward``, ``batchnorm_inference``; plan
building, notes, workspace sizes, ``execute`` and ``execute_plan_at_index``;
``create_handle`` and ``set_stream``), and ``pooling_library``, the twin of the ctypes
pooling call of ``cvzoo.core.cudnn.pooling``. It proves the dispatch, not cuDNN's numerics:

- execution reads and writes raw device pointers (``array.data.ptr`` of stand-in arrays)
  with the dims, strides and dtype each graph tensor declared, so a wrong descriptor gives
  wrong numbers, and a host array (no ``data.ptr``) cannot be passed at all;
- the convolutions compute with cvzoo's NumPy path (``connection.correlation``), batch
  normalisation with its closed forms, so results equal the im2col/CuPy path's, except
  that a float32 convolution whose graph did not deselect the TENSOR_CORE note reads its
  operands rounded to TF32, as tensor cores do (``allow_tf32``); each
  call is one stand-in device operation, which a stream capture records and a graph
  launch reruns;
- every built graph and every execution is appended to ``module.log`` (operation, plan
  index, workspace size and pointer, the handle's stream, the current device);
- ``module.refuse`` (a predicate on an operation name and its tensors, None by default)
  makes ``check_support`` raise ``cudnnGraphNotSupportedError``, as cuDNN does for a
  layout or dtype no engine takes.
"""

import ctypes
import itertools
import types

import numpy

from cvzoo.core.functions.connection import correlation

N_PLANS = 3  # execution plans each graph offers
_DTYPES = {'HALF': numpy.float16, 'FLOAT': numpy.float32}
_NAMES = {numpy.dtype(t): name for name, t in _DTYPES.items()}


class cudnnGraphNotSupportedError(RuntimeError):  # noqa: N801 - the frontend's name
    """No engine supports the graph."""


class _Tensor:
    def __init__(self, uid, dim=None, stride=None, data_type=None, by_value=False):
        self.uid = uid
        self.dim, self.stride, self.data_type = dim, stride, data_type
        self.by_value = by_value
        self.is_output = False

    def get_uid(self):
        return self.uid

    def set_output(self, flag):
        self.is_output = flag
        return self

    def set_dim(self, dim):
        self.dim = list(dim)
        return self

    def set_stride(self, stride):
        self.stride = list(stride)
        return self

    def set_data_type(self, data_type):
        self.data_type = data_type
        return self


def _view(pointer, tensor):
    """The NumPy view of ``tensor`` (dims, strides, dtype) at a raw address."""
    dtype = numpy.dtype(_DTYPES[tensor.data_type])
    extent = 1 + sum((d - 1) * s for d, s in zip(tensor.dim, tensor.stride))
    memory = (ctypes.c_char * (extent * dtype.itemsize)).from_address(pointer)
    flat = numpy.frombuffer(memory, dtype=dtype)
    return numpy.lib.stride_tricks.as_strided(
        flat, tuple(tensor.dim), tuple(s * dtype.itemsize for s in tensor.stride))


def _as_device_operation(what, compute, outputs):
    """Run ``compute`` (which writes ``outputs``) as one stand-in device operation, so that
    a stream capture records it and a graph launch reruns it, as CUDA captures cuDNN's
    kernels."""
    from cvzoo.testing import cupy_stand_in

    cupy_stand_in._run(what, compute, writes=[v for v in outputs if v is not None])


def _tf32(attrs, *arrays):
    """The arrays rounded to TensorFloat-32 (10-bit mantissa) when the engine may use it,
    as tensor cores read float32 operands."""
    if not attrs['tf32']:
        return arrays
    bits = [numpy.ascontiguousarray(a, numpy.float32).view(numpy.uint32) for a in arrays]
    return tuple(((b + numpy.uint32(0x1000)) & numpy.uint32(0xFFFFE000)).view(numpy.float32)
                 for b in bits)


def _conv_fprop(attrs, image, weight):
    image, weight = _tf32(attrs, image, weight)
    groups = image.shape[1] // weight.shape[1]
    out_size = attrs['out_dim'][2:]
    return correlation.correlate(image, weight, out_size, attrs['stride'],
                                 attrs['pre_padding'], attrs['dilation'], groups),


def _conv_dgrad(attrs, loss, filter):  # noqa: A002 - the frontend's argument name
    loss, filter = _tf32(attrs, loss, filter)  # noqa: A001
    in_size = attrs['out_dim'][2:]
    groups = attrs['out_dim'][1] // filter.shape[1]
    return correlation.correlate_transpose(loss, filter, in_size, attrs['stride'],
                                           attrs['pre_padding'], attrs['dilation'], groups),


def _conv_wgrad(attrs, image, loss):
    image, loss = _tf32(attrs, image, loss)
    ksize = attrs['out_dim'][2:]
    groups = image.shape[1] // attrs['out_dim'][1]
    return correlation.correlate_grad_weight(image, loss, ksize, attrs['stride'],
                                             attrs['pre_padding'], attrs['dilation'], groups),


_AXES = (0, 2, 3)


def _batchnorm(attrs, x, scale, bias, running_mean, running_var, epsilon, momentum):
    x = x.astype(numpy.float32)
    m = x.size // x.shape[1]
    mean = x.mean(axis=_AXES, keepdims=True)
    var = x.var(axis=_AXES, keepdims=True)
    inv_std = 1 / numpy.sqrt(var + epsilon.item())
    y = (x - mean) * inv_std * scale + bias
    factor = momentum.item()
    next_mean = (1 - factor) * running_mean + factor * mean
    next_var = (1 - factor) * running_var + factor * var * (m / max(m - 1, 1))
    return y, mean, inv_std, next_mean, next_var


def _batchnorm_backward(attrs, grad, x, scale, mean, inv_std):
    grad, x = grad.astype(numpy.float32), x.astype(numpy.float32)
    m = x.size // x.shape[1]
    x_hat = (x - mean) * inv_std
    gbias = grad.sum(axis=_AXES, keepdims=True)
    gscale = (grad * x_hat).sum(axis=_AXES, keepdims=True)
    gx = scale * inv_std * (grad - (x_hat * gscale + gbias) / m)
    return gx, gscale, gbias


def _batchnorm_inference(attrs, x, mean, inv_std, scale, bias):
    return (x.astype(numpy.float32) - mean) * inv_std * scale + bias,


_OPERATIONS = {
    'conv_fprop': (('image', 'weight'), 1, _conv_fprop),
    'conv_dgrad': (('loss', 'filter'), 1, _conv_dgrad),
    'conv_wgrad': (('image', 'loss'), 1, _conv_wgrad),
    'batchnorm': (('input', 'scale', 'bias', 'in_running_mean', 'in_running_var', 'epsilon',
                   'momentum'), 5, _batchnorm),
    'batchnorm_backward': (('grad', 'input', 'scale', 'mean', 'inv_variance'), 3,
                           _batchnorm_backward),
    'batchnorm_inference': (('input', 'mean', 'inv_variance', 'scale', 'bias'), 1,
                            _batchnorm_inference),
}


def make_module():
    """A fresh fake ``cudnn`` module (its own log, handles and refuse predicate)."""
    module = types.ModuleType('cudnn')
    module.__doc__ = 'A fake cuDNN frontend (cvzoo.testing.cudnn_stand_in).'
    module.is_stand_in = True
    names = ('HALF', 'FLOAT', 'BFLOAT16', 'DOUBLE', 'NOT_SET')
    module.data_type = types.SimpleNamespace(**{n: n for n in names})
    module.heur_mode = types.SimpleNamespace(A='A', B='B', FALLBACK='FALLBACK')
    module.numerical_note = types.SimpleNamespace(
        TENSOR_CORE='TENSOR_CORE', NONDETERMINISTIC='NONDETERMINISTIC')
    module.build_plan_policy = types.SimpleNamespace(
        ALL='ALL', HEURISTICS_CHOICE='HEURISTICS_CHOICE')
    module.cudnnGraphNotSupportedError = cudnnGraphNotSupportedError
    module.log = []
    module.refuse = None
    module.streams = {}  # handle -> the stream set on it
    handles = itertools.count(1)

    def create_handle():
        return next(handles)

    def set_stream(handle, stream):
        module.streams[handle] = stream

    module.create_handle, module.set_stream = create_handle, set_stream
    module.pygraph = _make_graph_class(module)
    module.pooling_library = _PoolingLibrary(module)
    return module


_POOLING_MODES = {0: 'pooling_max', 1: 'pooling_average_include_padding',
                  2: 'pooling_average_exclude_padding'}


class _PoolingLibrary:
    """The twin of cvzoo.core.cudnn.pooling.CtypesPooling: NumPy pooling from pointers."""


    def __init__(self, module):
        self.module = module

    def pooling_forward(self, handle, mode, window, x, y):
        import cupy  # the stand-in, installed by --fake-cuda

        from cvzoo.core.functions.pooling import average_pooling_2d, max_pooling_2d

        kh, kw, ph, pw, sh, sw = window
        self.module.log.append({'event': 'execute', 'operation': _POOLING_MODES[mode],
                                'index': None, 'stream': self.module.streams.get(handle),
                                'handle': handle, 'device': cupy.cuda.Device().id})
        x_view, y_view = (_view(p, _Tensor(0, list(d), list(s), _NAMES[numpy.dtype(t)]))
                          for p, d, s, t in (x, y))

        def compute():
            args = (numpy.array(x_view), (kh, kw), (sh, sw), (ph, pw))
            if mode == 0:
                result = max_pooling_2d.max_pooling_2d(*args, cover_all=False)
            else:
                result = average_pooling_2d.average_pooling_2d(
                    *args, pad_value=0 if mode == 1 else None)
            y_view[...] = result.array

        _as_device_operation(f'cudnn {_POOLING_MODES[mode]}', compute, [y_view])


def _make_graph_class(module):

    class pygraph:  # noqa: N801 - the frontend's name
        def __init__(self, io_data_type, intermediate_data_type, compute_data_type, handle):
            self.io_data_type = io_data_type
            self.handle = handle
            self.uids = itertools.count(1)
            self.operation = None
            self.deselected = []
            self.policy = None

        def tensor(self, name, dim, stride, data_type, is_pass_by_value=False):
            return _Tensor(next(self.uids), list(dim), list(stride), data_type,
                           is_pass_by_value)

        def _add(self, name, args, kwargs):
            arg_names, n_outputs, _ = _OPERATIONS[name]
            if self.operation is not None:
                raise RuntimeError('cudnn stand-in: one operation per graph')
            inputs = dict(zip(arg_names, args))
            inputs.update((k, kwargs.pop(k)) for k in arg_names if k in kwargs)
            outputs = [_Tensor(next(self.uids)) for _ in range(n_outputs)]
            self.operation = (name, inputs, kwargs, outputs)
            return outputs[0] if n_outputs == 1 else outputs

        def __getattr__(self, name):
            if name in _OPERATIONS:
                return lambda *args, **kwargs: self._add(name, args, kwargs)
            raise AttributeError(name)

        def validate(self):
            name, _, _, outputs = self.operation
            for tensor in outputs:
                if tensor.is_output and (tensor.dim is None or tensor.stride is None):
                    raise RuntimeError(f'cudnn stand-in: {name} output without dims/strides')

        def build_operation_graph(self):
            pass

        def create_execution_plans(self, modes):
            self.modes = list(modes)

        def deselect_numeric_notes(self, notes):
            self.deselected.extend(notes)

        def check_support(self):
            name, inputs, _, outputs = self.operation
            if module.refuse is not None and module.refuse(name, inputs, outputs):
                raise cudnnGraphNotSupportedError(f'cudnn stand-in: no engine for {name}')

        def build_plans(self, policy):
            self.policy = policy
            module.log.append({'event': 'build', 'operation': self.operation[0],
                               'policy': policy, 'deselected': list(self.deselected)})

        def get_execution_plan_count(self):
            return N_PLANS

        def get_workspace_size_plan_at_index(self, index):
            return 256 * (index + 1)

        def get_workspace_size(self):
            return self.get_workspace_size_plan_at_index(0)

        def execute(self, pack, workspace, handle=None):
            self._run(pack, workspace, None, handle)

        def execute_plan_at_index(self, pack, workspace, index, handle=None):
            if self.policy != module.build_plan_policy.ALL and index != 0:
                raise RuntimeError(f'cudnn stand-in: plan {index} was not built')
            self._run(pack, workspace, index, handle)

        def _run(self, pack, workspace, index, handle):
            import cupy  # the stand-in, installed by --fake-cuda

            name, inputs, attrs, outputs = self.operation
            pointers = {(k if isinstance(k, int) else k.get_uid()): v for k, v in pack.items()}
            if any(not isinstance(p, int) for p in pointers.values()) or \
                    not isinstance(workspace, int):
                raise TypeError('cudnn stand-in: execute takes integer device pointers')
            size = (self.get_workspace_size() if index is None
                    else self.get_workspace_size_plan_at_index(index))
            module.log.append({'event': 'execute', 'operation': name, 'index': index,
                               'workspace': workspace, 'workspace_size': size,
                               'stream': module.streams.get(handle), 'handle': handle,
                               'device': cupy.cuda.Device().id})
            attrs = dict(attrs, out_dim=outputs[0].dim, tf32=(
                name.startswith('conv') and self.io_data_type == 'FLOAT'
                and 'TENSOR_CORE' not in self.deselected))
            views = [_view(pointers[t.uid], t) if t.is_output else None for t in outputs]

            # NOTE: values passed by value are read now, as a launch of the graph sees them
            by_value = {t.uid: _view(pointers[t.uid], t).copy() for t in inputs.values()
                        if t.by_value}

            def compute():
                arrays = [by_value[t.uid] if t.by_value else _view(pointers[t.uid], t)
                          for t in inputs.values()]
                for view, result in zip(views, _OPERATIONS[name][2](attrs, *arrays)):
                    if view is not None:
                        view[...] = result

            _as_device_operation(f'cudnn {name}', compute, views)

    return pygraph
