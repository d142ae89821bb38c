"""cuDNN twins of connection/correlation.py: conv_fprop, conv_dgrad and conv_wgrad graphs.

Each function takes the arguments of its twin in ``correlation`` (x, W, sizes, stride,
pad, dilate, groups; W is (O, C / groups, kh, kw), so cuDNN infers the groups from the
channel counts) and returns the same array, or None when cuDNN refuses the graph, in which
case the caller runs the twin; they also return None when :func:`should_use` says no
(NumPy arrays, ``use_cudnn='never'``, no frontend, a dtype other than float16/float32). Outputs are C-contiguous new arrays of the inputs' device.
"""

from cvzoo.core import backend
from cvzoo.core.cudnn import plans
from cvzoo.core.cudnn.availability import should_use


def _post_padding(in_size, out_size, ksize, stride, pad, dilate):
    """Bottom/right padding giving ``out_size`` windows (cover_all needs more than pad)."""
    post = []
    for n, out, k, s, p, d in zip(in_size, out_size, ksize, stride, pad, dilate):
        needed = (out - 1) * s + (k - 1) * d + 1 - n - p
        post.append(max(p, needed))
    return post


def _geometry(in_size, out_size, ksize, stride, pad, dilate):
    post = _post_padding(in_size, out_size, ksize, stride, pad, dilate)
    return {'pre_padding': list(pad), 'post_padding': post, 'stride': list(stride),
            'dilation': list(dilate)}


def _run(operation, inputs, output, geometry):
    """Build (or reuse) the one-operation graph and run it; False when cuDNN refuses it."""
    (a_name, a), (b_name, b) = inputs
    key = plans.key(operation, a, b, output, tuple(map(tuple, geometry.values())))
    buffers = {a_name: a, b_name: b, 'out': output}

    def make_graph(cudnn, graph):
        tensors = {a_name: plans.tensor(graph, cudnn, a_name, a),
                   b_name: plans.tensor(graph, cudnn, b_name, b)}
        op = getattr(graph, operation)
        out = op(tensors[a_name], tensors[b_name], **geometry)
        plans.set_output(cudnn, out, output)
        tensors['out'] = out
        return tensors

    plan = plans.get(key, make_graph, buffers, output.dtype)
    if plan is None:
        return False
    plan.execute(buffers)
    return True


def correlate(x, W, out_size, stride, pad, dilate, groups):
    """Convolution forward (cuDNN conv_fprop); None when cuDNN is not used or refuses."""
    if not should_use('convolution_2d', x, W):
        return None
    xp = backend.get_array_module(x, W)
    y = xp.empty((x.shape[0], W.shape[0]) + tuple(out_size), dtype=x.dtype)
    geometry = _geometry(x.shape[2:], out_size, W.shape[2:], stride, pad, dilate)
    return y if _run('conv_fprop', (('image', x), ('weight', W)), y, geometry) else None


def correlate_transpose(gy, W, in_size, stride, pad, dilate, groups):
    """Adjoint in x (cuDNN conv_dgrad), the deconvolution forward; None off cuDNN."""
    if not should_use('deconvolution_2d', gy, W):
        return None
    xp = backend.get_array_module(gy, W)
    gx = xp.empty((gy.shape[0], W.shape[1] * groups) + tuple(in_size), dtype=gy.dtype)
    geometry = _geometry(in_size, gy.shape[2:], W.shape[2:], stride, pad, dilate)
    return gx if _run('conv_dgrad', (('loss', gy), ('filter', W)), gx, geometry) else None


def correlate_grad_weight(x, gy, ksize, stride, pad, dilate, groups):
    """Adjoint in W (cuDNN conv_wgrad); None when cuDNN is not used or refuses."""
    if not should_use('convolution_2d', x, gy):
        return None
    xp = backend.get_array_module(x, gy)
    gW = xp.empty((gy.shape[1], x.shape[1] // groups) + tuple(ksize), dtype=x.dtype)
    geometry = _geometry(x.shape[2:], gy.shape[2:], ksize, stride, pad, dilate)
    return gW if _run('conv_wgrad', (('image', x), ('loss', gy)), gW, geometry) else None
