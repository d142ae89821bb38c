"""Convert a foreign weight file (PyTorch .pth, ChainerCV .npz, Darknet) to cvzoo's .npz."""

import inspect

from cvzoo.core.serializers import npz
from cvzoo.models import zoo


def _class_count_kwargs(model_class, n_class):
    if n_class is None:
        return {}
    parameters = inspect.signature(model_class.__init__).parameters
    for name in ('n_class', 'n_fg_class'):
        if name in parameters:
            return {name: n_class}
    raise ValueError(f'n_class: {model_class.__name__} takes no class count')


def convert_weight_file(model_name, src, dst, source=None, n_class=None):
    """Load ``src`` into a fresh ``model_name`` and save it as a cvzoo .npz at ``dst``.

    Args:
        model_name (str): a registry name (``cvzoo models`` lists them).
        src (str): the foreign file; its format is recognised from its bytes.
        dst (str): where the cvzoo .npz goes (written atomically).
        source (str): the parameter-name mapping (``'torchvision'``, ``'chainercv'``,
            ``'darknet'``, ...); None lets the format decide.
        n_class (int): classes of the file's head, when not the model's default.

    Returns:
        the loaded model.

    Raises:
        cvzoo.errors.WeightLoadError: every missing, unexpected and mis-shaped key.
    """
    model_class = zoo.get_model_class(model_name)
    model = model_class(**_class_count_kwargs(model_class, n_class))
    zoo.load_weights(model, src, source=source)
    npz.save_npz(dst, model)
    return model
