"""Fixtures of the RetinaNet tests: the .pth writer (no torch needed)."""

import importlib.util
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope='session')
def pth_writer():
    """tests/models/converters/pth_writer.py: writes PyTorch checkpoints without torch."""
    path = TESTS / 'models' / 'converters' / 'pth_writer.py'
    spec = importlib.util.spec_from_file_location('cvzoo_tests_retinanet_pth_writer', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
