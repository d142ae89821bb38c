"""The model zoo: registered models, their pretrained weights and how to load them.

>>> from cvzoo.models import list_models
>>> isinstance(list_models(), list)
True
"""

from cvzoo.models.zoo import (
    Preset,
    Score,
    WeightFile,
    Weights,
    fetch_weights,
    get_model,
    get_model_class,
    iter_weights,
    list_models,
    load_weights,
    model_info,
    register,
    resolve_weights,
)

__all__ = [
    'Preset', 'Score', 'WeightFile', 'Weights', 'fetch_weights', 'get_model', 'get_model_class',
    'iter_weights', 'list_models',
    'load_weights', 'model_info', 'register', 'resolve_weights',
]
