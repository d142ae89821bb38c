"""Shared fixtures: seeded RNG, device, paths to the optional real data."""

import os
import pathlib

import numpy
import pytest

SHARED_DATA = pathlib.Path(__file__).resolve().parents[1].parent / 'shared' / 'data'


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's name, so each test is repeatable."""
    seed = abs(hash(request.node.nodeid)) % (2 ** 32)
    numpy.random.seed(seed % (2 ** 31))
    return numpy.random.default_rng(seed)


@pytest.fixture(params=['cpu', 'cuda:0'])
def device(request):
    """Each device test runs on the CPU, and on cuda:0 when CuPy and a GPU are present."""
    if request.param.startswith('cuda'):
        from cvzoo.core import backend

        if not backend.is_cuda_available():
            pytest.skip('no CUDA device')
    return request.param


@pytest.fixture
def shared_data():
    """The folder of real weights and images (../shared/data); skips when absent."""
    root = pathlib.Path(os.environ.get('CVZOO_SHARED_DATA', SHARED_DATA))
    if not root.is_dir():
        pytest.skip(f'real data folder {root} is absent')
    return root


def pytest_collection_modifyitems(config, items):
    for item in items:
        if 'reference' in item.keywords:
            pass  # reference tests skip themselves with pytest.importorskip
