"""Random weight files from torchvision's real models, for the torchvision reference tests.

A reference test builds the torchvision model with ``weights=None`` (through the
``torchvision`` fixture), gives it non-trivial random parameters here, saves its
``state_dict`` with ``torch.save`` and loads that file into cvzoo through the zoo key of
the published weights, so the file takes the same path (name mapping, conversion, cache,
preset) as the downloaded one would.
"""

import contextlib

import numpy
import pytest

from cvzoo.core import config
from cvzoo.models import zoo


def randomize_batch_norm(torch, net, probe, seed=0):
    """Give every BatchNorm of ``net`` random, non-trivial statistics and affine parameters.

    The running mean and variance start as the statistics of ``net(probe)`` (so that
    activations keep a sane scale through deep networks, which the default mean 0 and
    variance 1 do not) and are then perturbed at random: variances by a factor in
    [0.71, 1.41], means by up to 0.2 standard deviations; gamma is drawn from
    [0.75, 1.25] and beta from [-0.1, 0.1]. Larger perturbations make deep random
    networks chaotic: float32 rounding alone then moves the logits by more than 1e-4.

    Args:
        torch: the torch module.
        net (torch.nn.Module): the model; ``net(probe)`` must run in train mode.
        probe: the input tensor(s) of ``net``, a batch of at least 2.
        seed (int): seeds the perturbation.

    Returns:
        torch.nn.Module: ``net`` in eval mode.
    """
    norms = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average: after one batch, that batch's statistics
    net.train()
    with torch.no_grad():
        net(probe)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for norm in norms:
            n = norm.num_features
            std = norm.running_var.sqrt()
            norm.running_var *= 2.0 ** (torch.rand(n, generator=generator) - 0.5)
            norm.running_mean += 0.2 * std * (torch.rand(n, generator=generator) * 2 - 1)
            norm.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            norm.bias.copy_(torch.rand(n, generator=generator) * 0.2 - 0.1)
            norm.momentum = 0.1
    return net.eval()


def spread_logits(torch, layer, logits, std=3.0):
    """Scale ``layer``'s weight and bias so that its outputs ``logits`` get ``std``.

    Random classifiers give nearly uniform (or saturated) probabilities, under which a
    wrong preprocessing hardly shows; a spread of a few units keeps softmax sensitive.
    """
    factor = std / float(logits.std())
    with torch.no_grad():
        layer.weight *= factor
        if layer.bias is not None:
            layer.bias *= factor


@contextlib.contextmanager
def fetching(path):
    """Within the block, every zoo key resolves to the local file ``path``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zoo, 'fetch_weights', lambda entry: [str(path)])
        yield


def save_and_load(torch, net, path, model_class, key, **kwargs):
    """``torch.save(net.state_dict(), path)``, then ``model_class(pretrained_model=key)``
    with the zoo's download answering ``path``."""
    torch.save(net.state_dict(), path)
    with fetching(path):
        return model_class(pretrained_model=key, **kwargs)


def forward(model, x):
    """cvzoo ``model(x)`` in test mode without backprop, as an array (or tuple of them)."""
    with config.using_config('train', False), config.no_backprop_mode():
        y = model(x)
    if isinstance(y, (tuple, list)):
        return tuple(h.array for h in y)
    return y.array


def assert_close_to_scale(actual, expected, rtol=1e-4, err_msg=''):
    """``actual == expected`` up to ``rtol`` of ``expected``'s largest magnitude.

    Elementwise relative error is meaningless for outputs near zero; float32 rounding
    grows with the size of the numbers summed, which the largest output tracks.
    """
    expected = numpy.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    atol = rtol * float(numpy.abs(expected).max())
    numpy.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=err_msg)
