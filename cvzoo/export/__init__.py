"""Export cvzoo models to other formats: ``to_onnx`` writes an ONNX file.

The ``onnx`` package is needed only when exporting (``pip install 'cvzoo[onnx]'``);
``onnxruntime`` runs what was written.
"""

from cvzoo.export.onnx_export import to_onnx
from cvzoo.export.unsupported_function_error import UnsupportedFunctionError

__all__ = ['UnsupportedFunctionError', 'to_onnx']
