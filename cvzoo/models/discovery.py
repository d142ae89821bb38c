"""Discovery: import every module of the model packages once, so that their classes
register themselves in :mod:`cvzoo.models.registry`.

Model modules take only label names from ``cvzoo.datasets`` (DESIGN.md), so discovery
loads no dataset loader and no Pillow.
"""

import functools
import importlib
import pkgutil

_MODEL_PACKAGES = ('cvzoo.models.classification', 'cvzoo.models.detection',
                   'cvzoo.models.segmentation', 'cvzoo.models.instance_segmentation',
                   'cvzoo.models.keypoint_detection')


@functools.cache
def import_all_models():
    """Import every module of the model packages once, so that their classes register."""
    for package_name in _MODEL_PACKAGES:
        try:
            package = importlib.import_module(package_name)
        except ModuleNotFoundError as exc:
            if exc.name != package_name:
                raise
            continue
        prefix = package_name + '.'
        for module in pkgutil.walk_packages(package.__path__, prefix):
            importlib.import_module(module.name)
