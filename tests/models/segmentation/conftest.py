"""Fixtures of the segmentation model tests: the .pth writer and ESPNet's key list."""

import importlib.util
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[2]


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope='session')
def pth_writer():
    """tests/models/converters/pth_writer.py: writes PyTorch checkpoints without torch."""
    return _load(TESTS / 'models' / 'converters' / 'pth_writer.py', 'cvzoo_tests_seg_pth_writer')


@pytest.fixture(scope='session')
def espnet_keys():
    """The module listing the original ESPNet state-dict keys and shapes."""
    return _load(pathlib.Path(__file__).parent / 'espnet' / 'espnet_keys.py',
                 'cvzoo_tests_espnet_keys')
