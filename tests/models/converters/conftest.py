"""Fixtures of the converter tests: the pure-Python checkpoint writer."""

import importlib.util
import pathlib

import pytest


@pytest.fixture(scope='session')
def pth_writer():
    """The module tests/models/converters/pth_writer.py (no torch needed)."""
    path = pathlib.Path(__file__).with_name('pth_writer.py')
    spec = importlib.util.spec_from_file_location('cvzoo_tests_pth_writer', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
