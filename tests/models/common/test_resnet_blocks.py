import numpy
import pytest

import cvzoo.core as C
from cvzoo.core import config
from cvzoo.models.common import resnet_blocks


def _trained_like(block, rng):
    """Give every BN non-trivial statistics, so that relu cuts some values."""
    for link in block.links():
        if hasattr(link, 'avg_mean') and link.avg_mean is not None:
            link.avg_mean[...] = rng.normal(size=link.avg_mean.shape)
            link.avg_var[...] = rng.uniform(0.5, 2, size=link.avg_var.shape)


@pytest.mark.parametrize('residual_conv, add_seblock', [(False, False), (True, False),
                                                          (False, True)])
def test_inference_in_place_add_relu_matches_the_graph_path(residual_conv, add_seblock,
                                                            rng, monkeypatch):
    calls = []
    real = resnet_blocks._add_relu_in_place
    monkeypatch.setattr(resnet_blocks, '_add_relu_in_place',
                        lambda h, shortcut: (calls.append(h.shape), real(h, shortcut)))
    in_channels = 8 if residual_conv else 16
    block = resnet_blocks.Bottleneck(in_channels, 4, 16, residual_conv=residual_conv,
                                     add_seblock=add_seblock)
    x = rng.normal(size=(2, in_channels, 9, 9)).astype(numpy.float32)
    with config.using_config('train', False):
        block(x)  # initialise lazily shaped parameters
        _trained_like(block, rng)
        with_graph = block(x)
        with C.no_backprop_mode():
            in_place = block(x)
    assert with_graph.creator is not None and in_place.creator is None
    assert calls == [(2, 16, 9, 9)]  # only the no-graph call went in place
    assert (in_place.array == 0).any() and (in_place.array > 0).any()
    numpy.testing.assert_array_equal(in_place.array, with_graph.array)


def test_shortcut_is_not_written(rng):
    block = resnet_blocks.Bottleneck(16, 4, 16)
    x = rng.normal(size=(2, 16, 5, 5)).astype(numpy.float32)
    before = x.copy()
    with config.using_config('train', False), C.no_backprop_mode():
        block(x)
    numpy.testing.assert_array_equal(x, before)
