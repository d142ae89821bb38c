"""to_onnx: write a model's forward pass as an ONNX file.

The forward pass is traced once in test mode (``graph_trace``), as onnx-chainer did,
and each recorded FunctionNode is translated into ONNX nodes (``onnx_ops``,
``onnx_layer_ops``). Parameters and the constant arrays the functions read become
initializers. The graph's input is named ``input`` with a dynamic batch axis; its
outputs ``output`` (one) or ``output_0``, ``output_1``, ... in the order the forward
returns them (nested lists flattened; arrays computed outside the graph, such as
anchors, are not outputs).

Only the batch axis is dynamic: spatial sizes, and every shape the forward computed
from them, are those of the example input.
"""

import functools

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.export import graph_trace, onnx_builder, onnx_layer_ops, onnx_ops, ssd_postprocess
from cvzoo.export.unsupported_function_error import UnsupportedFunctionError

TRANSLATIONS = {**onnx_ops.TRANSLATIONS, **onnx_layer_ops.TRANSLATIONS}
BATCH_AXIS_NAME = 'batch'
MIN_OPSET = 13  # the translations write the forms of opset 13 on (ReduceSum's axes input)


def _import_onnx():
    try:
        import onnx  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise ImportError('cvzoo.export.to_onnx needs the onnx package: '
                          "pip install 'cvzoo[onnx]'") from None
    return onnx


def check_opset(opset, name='opset'):
    """Refuse an opset the translations do not write (before 13) or the installed onnx
    package does not know (after ``onnx.defs.onnx_opset_version()``).

    Raises:
        cvzoo.errors.UsageError: naming ``name`` (``'--opset'`` on the command line),
            the range and the value.
    """
    newest = _import_onnx().defs.onnx_opset_version()
    if isinstance(opset, bool) or not isinstance(opset, int) \
            or not MIN_OPSET <= opset <= newest:
        raise errors.UsageError(f'{name}: expected an ONNX opset from {MIN_OPSET} to {newest} '
                                f'(the newest of the installed onnx package), got {opset!r}')


def _model_name(model):
    return type(model).__name__


def _check_supported(functions, model):
    """Raise UnsupportedFunctionError naming every function without a translation."""
    missing = sorted({f.label for f in functions
                      if f.label not in TRANSLATIONS and f.label != 'Upsampling2D'})
    if missing:
        others = f'(also: {", ".join(missing[1:])})' if len(missing) > 1 else ''
        raise UnsupportedFunctionError(missing[0], _model_name(model), others)


def _leaf_names(model):
    """id(array or Parameter) -> a name for the initializer: its path in the model."""
    names = {}
    if not hasattr(model, 'namedlinks'):
        return names
    for path, param in model.namedparams():
        names[id(param)] = path.lstrip('/')
    for path, link in model.namedlinks():
        for name in getattr(link, '_persistent', ()):
            value = getattr(link, name, None)
            if value is not None and not numpy.isscalar(value):
                names.setdefault(id(value), f'{path.strip("/")}/{name}'.lstrip('/'))
    return names


class _Exporter:
    """The state of one export: ONNX names of graph values and which are batched."""

    def __init__(self, builder, graph, model):
        self.builder = builder
        self.graph = graph
        self.model = model
        self.names = {id(graph.input.node): builder.reserve('input')}
        self.batched = {id(graph.input.node): True}
        self.leaf_names = _leaf_names(model)
        self.max_indexes = {}  # id(indexes array) -> ONNX name of MaxPool's Indices

    def name_of(self, node):
        """The ONNX name of a graph value; a leaf becomes an initializer on first use."""
        key = id(node)
        if key not in self.names:
            leaf = self.graph.leaves.get(key)
            if leaf is None or leaf.array is None:
                raise ValueError(f'to_onnx: a value of shape {node.shape} read by the graph '
                                 'is neither the input, a parameter nor a kept constant')
            array = backend.to_numpy(leaf.array)
            stem = self.leaf_names.get(id(leaf)) or self.leaf_names.get(id(leaf.array))
            self.names[key] = self.builder.initializer(array, stem or self.builder.fresh('const'))
            self.batched[key] = False
        return self.names[key]

    def call_of(self, function):
        inputs = [self.name_of(node) for node in function.inputs]
        out_nodes = [ref() for ref in function.outputs]
        outputs = [self.builder.fresh(function.label.strip('_').lower()) for _ in out_nodes]
        batched = [self.batched.get(id(node), False) for node in function.inputs]
        for node, name in zip(out_nodes, outputs):
            if node is not None:
                self.names[id(node)] = name
                self.batched[id(node)] = any(batched)
        return onnx_builder.Call(
            function=function, inputs=inputs, outputs=outputs,
            in_shapes=[tuple(node.shape) for node in function.inputs],
            out_shapes=[None if node is None else tuple(node.shape) for node in out_nodes],
            batched=batched, dtype=numpy.dtype(function.inputs[0].dtype))

    def translate(self, function, unpooled_indexes):
        call = self.call_of(function)
        try:
            if function.label == 'Upsampling2D':
                indexes = self.max_indexes.get(id(function.indexes))
                if indexes is None:
                    raise onnx_ops.UntranslatableCall(
                        'its indexes come from no max pooling of the traced graph')
                onnx_layer_ops.upsampling(self.builder, call, indexes)
            elif function.label == 'MaxPooling2D' and id(function.indexes) in unpooled_indexes:
                self.max_indexes[id(function.indexes)] = onnx_layer_ops._max_pooling(
                    self.builder, call, with_indexes=True)
            else:
                TRANSLATIONS[function.label](self.builder, call)
        except onnx_ops.UntranslatableCall as exc:
            raise UnsupportedFunctionError(function.label, _model_name(self.model),
                                           str(exc)) from None


def _value_info(helper, name, node, batched):
    dtype = helper.np_dtype_to_tensor_dtype(numpy.dtype(node.dtype))
    shape = list(node.shape)
    if batched and shape:
        shape[0] = BATCH_AXIS_NAME
    return helper.make_tensor_value_info(name, dtype, shape)


def _network_outputs(builder, exporter, graph):
    """Name the network's outputs ``output`` or ``output_0``, ``output_1``, ..."""
    single = len(graph.outputs) == 1
    outputs = []
    for i, y in enumerate(graph.outputs):
        name = builder.reserve('output' if single else f'output_{i}')
        builder.node('Identity', [exporter.name_of(y.node)], [name])
        outputs.append(_value_info(builder.helper, name, y.node, True))
    return outputs


def build_model_proto(model, example_input, opset=17, with_postprocess=False):
    """Trace ``model`` on ``example_input`` and return the ONNX ModelProto (not saved).

    Args and Raises: as :func:`to_onnx`.
    """
    _import_onnx()
    postprocess = None
    if with_postprocess:
        ssd_postprocess.settings_of(model)  # NOTE: fail before the trace
        postprocess = functools.partial(ssd_postprocess.add_nodes, model=model)
    return graph_to_model_proto(graph_trace.trace(model, example_input), model, opset,
                                postprocess)


def graph_to_model_proto(graph, model, opset=17, postprocess=None):
    """The ONNX ModelProto of a graph traced from ``model`` (:func:`graph_trace.trace`).

    Args:
        graph (TracedGraph): the traced forward.
        model: the traced model (names the graph and the errors).
        opset (int): the ONNX opset.
        postprocess (callable or None): ``postprocess(builder, output_names) ->
            (extra_inputs, outputs)`` appends nodes after the network and returns the
            graph's further inputs and its outputs (ONNX value infos); None: the
            network's outputs are the graph's.

    Raises: as :func:`to_onnx`.
    """
    onnx = _import_onnx()
    if not graph.outputs:
        raise ValueError(f'to_onnx: {_model_name(model)} returned no Variable')
    _check_supported(graph.functions, model)
    builder = onnx_builder.OnnxGraphBuilder(opset)
    exporter = _Exporter(builder, graph, model)
    unpooled = {id(f.indexes) for f in graph.functions if f.label == 'Upsampling2D'}
    for function in graph.functions:
        exporter.translate(function, unpooled)
    helper = onnx.helper
    for i, y in enumerate(graph.outputs):
        if not exporter.batched.get(id(y.node)):
            raise ValueError(f'to_onnx: output {i} of {_model_name(model)} does not depend on '
                             'the input (it was computed outside the recorded graph)')
    inputs = [_value_info(helper, 'input', graph.input.node, True)]
    if postprocess is None:
        outputs = _network_outputs(builder, exporter, graph)
    else:
        extra_inputs, outputs = postprocess(
            builder, [exporter.name_of(y.node) for y in graph.outputs])
        inputs += extra_inputs
    onnx_graph = helper.make_graph(builder.nodes, _model_name(model), inputs, outputs,
                                   initializer=builder.initializers)
    opset_imports = [helper.make_opsetid('', opset)]
    # NOTE: the oldest IR version that carries the opset, not the onnx package's newest,
    # so that onnxruntime releases older than that package can read the file
    proto = helper.make_model(onnx_graph, opset_imports=opset_imports, producer_name='cvzoo',
                              ir_version=helper.find_min_ir_version_for(opset_imports))
    onnx.checker.check_model(proto)
    return proto


def to_onnx(model, example_input, path, opset=17, with_postprocess=False):
    """Export ``model``'s forward pass to an ONNX file.

    The model is called once on ``example_input`` in test mode with the graph recorded;
    the functions of that graph are written as ONNX nodes. Classifiers give their
    logits, segmenters their score map, detectors their raw head outputs (what their
    ``forward`` returns).

    Args:
        model: a Link (or any callable) taking one (B, ...) Variable and returning a
            Variable or a (nested) list or tuple of Variables.
        example_input (array): an input of the size the ONNX graph will take, e.g.
            (1, 3, 224, 224) float32 prepared as ``model.prepare`` does. The batch axis
            of the written graph is dynamic; the other axes are fixed.
        path (str): the .onnx file to write.
        opset (int): the ONNX opset, from 13 to the newest the onnx package knows.
        with_postprocess (bool): also write an SSD's decode, NMS and top-k, so that the
            file gives detections (inputs ``input`` and ``sizes``, outputs
            ``image_index``, ``bbox``, ``label``, ``score``; see
            :mod:`cvzoo.export.ssd_postprocess`). SSD detectors only.

    Returns:
        str: ``path``.

    Raises:
        UnsupportedFunctionError: a function of the graph has no ONNX translation; the
            message names it and the model.
        ImportError: the onnx package is not installed (``pip install 'cvzoo[onnx]'``).
        ValueError: ``with_postprocess`` for a model that is not an SSD.
        cvzoo.errors.UsageError: an opset outside that range (:func:`check_opset`).

    >>> import numpy as np, tempfile, os
    >>> from cvzoo.core import links as L
    >>> path = os.path.join(tempfile.mkdtemp(), 'linear.onnx')
    >>> to_onnx(L.Linear(3, 2), np.zeros((1, 3), np.float32), path) == path
    True
    """
    onnx = _import_onnx()
    check_opset(opset)
    proto = build_model_proto(model, example_input, opset, with_postprocess)
    onnx.save(proto, path)
    return path
