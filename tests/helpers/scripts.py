"""Load a file of scripts/ as a module, so tests call its functions directly."""

import importlib.util
import pathlib

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / 'scripts'


def load_script(name):
    """The module of ``scripts/<name>.py`` (e.g. ``load_script('train_yolo')``)."""
    spec = importlib.util.spec_from_file_location(f'cvzoo_script_{name}',
                                                  SCRIPTS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
