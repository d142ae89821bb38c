"""Fixtures of the model tests."""

import pytest

from cvzoo.testing import small_models


@pytest.fixture
def build_small_model(request, monkeypatch):
    """``build_small_model(name, seed=0, pretrained_model=None) -> (task, model)``: a
    registered model built small with random weights (or a file's) on the CPU
    (:mod:`cvzoo.testing.small_models`). Models built from a Darknet cfg find it in the
    shared data's weights folder, as the mirror (they skip without it)."""
    def build(name, **kwargs):
        if name in small_models.NEEDS_CFG:
            shared_data = request.getfixturevalue('shared_data')
            monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(shared_data / 'weights'))
        return small_models.build_small_model(name, **kwargs)
    return build
