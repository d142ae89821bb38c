"""cuDNN batch normalisation of NCHW arrays: training forward, its backward, inference.

Used for float16/float32 (N, C, H, W) input normalised over axes (0, 2, 3) with float32
(C,) parameters; anything else (other axes, a float64 or strided running array) returns
None and the caller computes it with CuPy. The saved mean and inverse standard deviation
are (1, C, 1, 1) float32 arrays, those of the CuPy path. The running statistics follow
cvzoo's rule, ``running = decay * running + (1 - decay) * batch`` (cuDNN's momentum is
``1 - decay``) with the unbiased variance, and are written into the caller's arrays.
"""

import numpy

from cvzoo.core import backend
from cvzoo.core.cudnn import plans
from cvzoo.core.cudnn.availability import should_use

_NCHW_AXES = (0, 2, 3)


def _usable(what, x, axes, *params):
    if x.ndim != 4 or tuple(axes) != _NCHW_AXES or not should_use(what, x):
        return False
    return all(p.dtype == numpy.float32 and p.flags.c_contiguous for p in params)


def _scalar(value):
    """A pass-by-value float32 scalar for the graph (host memory, read at launch)."""
    return numpy.full((1, 1, 1, 1), value, dtype=numpy.float32)


def _as_param(array, channels):
    return array.reshape(1, channels, 1, 1)


def _scalar_tensor(graph, cudnn, name):
    return graph.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                        data_type=cudnn.data_type.FLOAT, is_pass_by_value=True)


def _execute(operation, buffers, outputs, build):
    key = plans.key(operation, *buffers.values())

    def make_graph(cudnn, graph):
        tensors = {name: (_scalar_tensor(graph, cudnn, name) if isinstance(value, numpy.ndarray)
                          else plans.tensor(graph, cudnn, name, value))
                   for name, value in buffers.items()}
        for name, graph_tensor in zip(outputs, build(graph, tensors)):
            plans.set_output(cudnn, graph_tensor, outputs[name])
            tensors[name] = graph_tensor
        return tensors

    everything = dict(buffers, **outputs)
    plan = plans.get(key, make_graph, everything, buffers['x'].dtype)
    if plan is None:
        return False
    plan.execute(everything)
    return True


def forward_training(x, gamma, beta, eps, axes, running_mean, running_var, decay):
    """(y, mean, inv_std) of batch normalisation on cuDNN, updating the running arrays in
    place; None when cuDNN is not used for this case."""
    running = [r for r in (running_mean, running_var) if r is not None]
    if not _usable('batch_normalization', x, axes, gamma, beta, *running):
        return None
    xp = backend.get_array_module(x)
    channels = x.shape[1]
    zeros = [xp.zeros((1, channels, 1, 1), dtype=numpy.float32) for _ in range(2)]
    mean_in = zeros[0] if running_mean is None else _as_param(running_mean, channels)
    var_in = zeros[1] if running_var is None else _as_param(running_var, channels)
    buffers = {'x': x, 'scale': _as_param(gamma, channels), 'bias': _as_param(beta, channels),
               'in_running_mean': mean_in, 'in_running_var': var_in,
               'epsilon': _scalar(eps), 'momentum': _scalar(1 - decay)}
    outputs = {name: xp.empty((1, channels, 1, 1), dtype=numpy.float32) for name in (
        'mean', 'inv_std', 'next_running_mean', 'next_running_var')}
    outputs = dict(y=xp.empty(x.shape, dtype=x.dtype), **outputs)

    def build(graph, t):
        return graph.batchnorm(t['x'], t['scale'], t['bias'], t['in_running_mean'],
                               t['in_running_var'], t['epsilon'], t['momentum'])

    if not _execute('batchnorm', buffers, outputs, build):
        return None
    if running_mean is not None:
        running_mean[...] = outputs['next_running_mean'].reshape(running_mean.shape)
    if running_var is not None:
        running_var[...] = outputs['next_running_var'].reshape(running_var.shape)
    return outputs['y'], outputs['mean'], outputs['inv_std']


def backward(x, gamma, gy, mean, inv_std, axes):
    """(gx, ggamma, gbeta) of batch normalisation on cuDNN, ggamma and gbeta of gamma's
    shape; None when cuDNN is not used for this case."""
    if gy.dtype != x.dtype or not _usable('batch_normalization', x, axes, gamma, mean, inv_std):
        return None
    xp = backend.get_array_module(x)
    channels = x.shape[1]
    buffers = {'x': x, 'gy': gy, 'scale': _as_param(gamma, channels), 'mean': mean,
               'inv_std': inv_std}
    outputs = {'gx': xp.empty(x.shape, dtype=x.dtype),
               'ggamma': xp.empty((1, channels, 1, 1), dtype=numpy.float32),
               'gbeta': xp.empty((1, channels, 1, 1), dtype=numpy.float32)}

    def build(graph, t):
        return graph.batchnorm_backward(t['gy'], t['x'], t['scale'], t['mean'], t['inv_std'])

    if not _execute('batchnorm_backward', buffers, outputs, build):
        return None
    return (outputs['gx'], outputs['ggamma'].reshape(gamma.shape),
            outputs['gbeta'].reshape(gamma.shape))


def forward_inference(x, gamma, beta, mean, var, eps, axes):
    """y of batch normalisation with given statistics on cuDNN; None when not used."""
    if not _usable('fixed_batch_normalization', x, axes, gamma, beta, mean, var):
        return None
    xp = backend.get_array_module(x)
    channels = x.shape[1]
    inv_std = (var + numpy.float32(eps)) ** numpy.float32(-0.5)
    buffers = {'x': x, 'mean': _as_param(mean, channels), 'inv_std': _as_param(inv_std, channels),
               'scale': _as_param(gamma, channels), 'bias': _as_param(beta, channels)}
    outputs = {'y': xp.empty(x.shape, dtype=x.dtype)}

    def build(graph, t):
        return [graph.batchnorm_inference(t['x'], t['mean'], t['inv_std'], t['scale'],
                                          t['bias'])]

    return outputs['y'] if _execute('batchnorm_inference', buffers, outputs, build) else None
