"""Convert a foreign weight file (PyTorch .pth, ChainerCV .npz, Darknet) to cvzoo's
.npz, or to .safetensors."""

import inspect
import os

from cvzoo.core.serializers import npz
from cvzoo.models import zoo
from cvzoo.models.weights.converters import safetensors_file


def _class_count_kwargs(model_class, n_class):
    if n_class is None:
        return {}
    parameters = inspect.signature(model_class.__init__).parameters
    for name in ('n_class', 'n_fg_class'):
        if name in parameters:
            return {name: n_class}
    raise ValueError(f'n_class: {model_class.__name__} takes no class count')


def convert_weight_file(model_name, src, dst, source=None, n_class=None):
    """Load ``src`` into a fresh ``model_name`` and save it at ``dst``: a ``.safetensors``
    file when ``dst`` ends so (needs ``cvzoo[safetensors]``), a cvzoo .npz otherwise.

    Args:
        model_name (str): a registry name (``cvzoo models`` lists them).
        src (str): the foreign file; its format is recognised from its bytes.
        dst (str): where the weights go (written atomically).
        source (str): the parameter-name mapping (``'torchvision'``, ``'chainercv'``,
            ``'darknet'``, ...); None lets the format decide.
        n_class (int): classes of the file's head, when not the model's default.

    Returns:
        the loaded model.

    Raises:
        cvzoo.errors.WeightLoadError: every missing, unexpected and mis-shaped key.
    """
    to_safetensors = os.fspath(dst).endswith(safetensors_file.SUFFIX)
    if to_safetensors:
        safetensors_file.require_package()  # before the (slow) load, not after it
    model_class = zoo.get_model_class(model_name)
    model = model_class(**_class_count_kwargs(model_class, n_class))
    zoo.load_weights(model, src, source=source)
    if to_safetensors:
        safetensors_file.save_safetensors(dst, model)
    else:
        npz.save_npz(dst, model)
    return model
