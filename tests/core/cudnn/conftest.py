"""Fixtures of the cuDNN dispatch tests: the fake ``cudnn`` frontend on the CuPy stand-in."""

import sys

import pytest


@pytest.fixture
def fake_cudnn(stand_in, monkeypatch):
    """A fresh fake ``cudnn`` module as sys.modules['cudnn'], with empty plan caches."""
    from cvzoo.core.cudnn import availability, plans
    from cvzoo.testing import cudnn_stand_in

    module = cudnn_stand_in.make_module()
    monkeypatch.setitem(sys.modules, 'cudnn', module)
    availability.forget_frontend()
    plans.clear()
    yield module
    availability.forget_frontend()
    plans.clear()


@pytest.fixture
def no_cudnn(stand_in, monkeypatch):
    """sys.modules['cudnn'] = None: the frontend does not import."""
    from cvzoo.core.cudnn import availability, plans

    monkeypatch.setitem(sys.modules, 'cudnn', None)
    availability.forget_frontend()
    plans.clear()
    yield
    availability.forget_frontend()
    plans.clear()
