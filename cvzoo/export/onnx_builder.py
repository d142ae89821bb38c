"""OnnxGraphBuilder: collects the nodes and initializers of an ONNX graph.

The translations of cvzoo functions (``onnx_ops``, ``onnx_layer_ops``) emit their
nodes through it. It needs the ``onnx`` package, which cvzoo imports only when
exporting.
"""

import dataclasses

import numpy


@dataclasses.dataclass
class Call:
    """One traced function to translate.

    Attributes:
        function (FunctionNode): the traced node (its attributes: stride, axes, ...).
        inputs (list of str): ONNX names of its inputs.
        outputs (list of str): ONNX names its outputs must get.
        in_shapes, out_shapes (list of tuple): shapes seen while tracing (an output
            nothing used may be None).
        batched (list of bool): per input, whether it depends on the model input, so
            that its axis 0 is the dynamic batch axis.
        dtype (numpy.dtype): the dtype of the first input.
    """

    function: object
    inputs: list
    outputs: list
    in_shapes: list
    out_shapes: list
    batched: list
    dtype: numpy.dtype


class OnnxGraphBuilder:
    """Nodes and initializers of one graph, with unique names.

    Args:
        opset (int): the ONNX opset the translations target.
    """

    def __init__(self, opset):
        import onnx  # noqa: PLC0415 - optional dependency
        from onnx import numpy_helper  # noqa: PLC0415

        self.helper = onnx.helper
        self.numpy_helper = numpy_helper
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self._names = set()
        self._count = 0

    def fresh(self, stem):
        """A name not used before in the graph, built from ``stem``."""
        self._count += 1
        name = f'{stem}_{self._count}'
        while name in self._names:
            self._count += 1
            name = f'{stem}_{self._count}'
        self._names.add(name)
        return name

    def reserve(self, name):
        """Mark ``name`` (an input, parameter or output name) as taken."""
        self._names.add(name)
        return name

    def node(self, op_type, inputs, outputs=None, **attributes):
        """Append one node; return its output names (one fresh name unless given)."""
        if outputs is None:
            outputs = [self.fresh(op_type.lower())]
        self.nodes.append(self.helper.make_node(
            op_type, list(inputs), list(outputs), name=self.fresh(f'n_{op_type}'),
            **attributes))
        return list(outputs)

    def initializer(self, array, name):
        """Add ``array`` as an initializer named ``name`` (made unique); return the name."""
        name = name if name not in self._names else self.fresh(name)
        self.reserve(name)
        self.initializers.append(self.numpy_helper.from_array(numpy.asarray(array), name))
        return name

    def constant(self, value, dtype=numpy.float32, stem='const'):
        """A constant (a scalar, a list or an array, cast to ``dtype``) as an initializer."""
        return self.initializer(numpy.asarray(value, dtype=dtype), self.fresh(stem))

    def int64s(self, values):
        """A 1-D int64 constant, for shape, axes and slice arguments."""
        return self.constant(list(values), numpy.int64, stem='ints')
