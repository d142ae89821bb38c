"""UnsupportedFunctionError: a function of the traced graph has no ONNX translation."""

from cvzoo import errors


class UnsupportedFunctionError(errors.CvzooError, ValueError):
    """A traced forward pass holds a function that cvzoo cannot write as ONNX.

    Args:
        function_name (str): the FunctionNode class name, e.g. ``'RoIAlign2D'``.
        model_name (str): the model (its class name) that was being exported.
        reason (str): optional detail (what about the function is not translatable).

    Attributes:
        function_name (str), model_name (str): as given.
    """

    def __init__(self, function_name, model_name, reason=''):
        self.function_name = function_name
        self.model_name = model_name
        detail = f': {reason}' if reason else ''
        super().__init__(
            f'cannot export {model_name} to ONNX: function {function_name} has no ONNX '
            f'translation{detail}')
