"""LossScaler: skips steps whose float16 gradients overflow, lowers the scale, grows it back
after growth_interval good steps; hooks see unscaled gradients; one sync per step."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import autocast, optimizers
from cvzoo.core.links.link import Link
from cvzoo.core.serializers import npz
from cvzoo.core.variable import Parameter
from cvzoo.errors import UsageError


class _Scalar(Link):
    """y = sum(linear(x, W)) with one 1x1 weight, computed under float16 autocast."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.ones((1, 1), numpy.float32))

    def __call__(self, x):
        with autocast('float16'):
            return F.sum(F.linear(x, self.W))


def _setup(**scaler_args):
    link = _Scalar()
    optimizer = optimizers.SGD(lr=0.001).setup(link)
    optimizer.loss_scaler = optimizers.LossScaler(**scaler_args)
    return link, optimizer


# NOTE: with x = 4 the float16 weight gradient is 4 * scale: inf (above float16's 65504)
# for a scale of 2^15 or 2^14, finite for 2^13.
X = numpy.full((1, 1), 4, numpy.float32)


def test_overflow_skips_the_step_and_halves_the_scale_then_it_grows_back():
    link, optimizer = _setup(init_scale=2.0 ** 15, growth_interval=3)
    scaler = optimizer.loss_scaler
    history = []
    for _ in range(6):
        before = link.W.array.copy()
        optimizer.update(link, X)
        history.append((scaler.loss_scale, bool((link.W.array != before).any())))
    assert history == [
        (2.0 ** 14, False),  # inf: skipped, halved
        (2.0 ** 13, False),  # inf again: skipped, halved
        (2.0 ** 13, True),   # finite: updated
        (2.0 ** 13, True),
        (2.0 ** 14, True),   # the third good step in a row: the scale doubles
        (2.0 ** 13, False),  # which overflows again
    ]
    assert optimizer.t == 3 and scaler.n_skipped == 3
    # each good step used the true gradient, 4, not the scaled one
    numpy.testing.assert_allclose(link.W.array, 1 - 3 * 0.001 * 4, rtol=1e-6)


def test_without_a_scaler_the_float16_gradient_underflows():
    """Why scaling: a gradient of 2^-26 is 0 in float16, and survives scaled by 2^15."""
    x = numpy.full((1, 1), 2.0 ** -26, numpy.float32)
    link = _Scalar()
    optimizer = optimizers.SGD(lr=1.0).setup(link)
    optimizer.update(link, x)
    assert link.W.array[0, 0] == 1.0
    link, optimizer = _setup()
    optimizer.lr = 1.0
    optimizer.update(link, x)
    assert link.W.array[0, 0] == numpy.float32(1 - 2.0 ** -26)


class _RecordGrads:
    name = 'record'
    timing = 'pre'

    def __init__(self):
        self.seen = []

    def __call__(self, optimizer):
        self.seen.append(float(optimizer.target.W.grad[0, 0]))


def test_hooks_see_unscaled_gradients_and_do_not_run_on_skipped_steps():
    link, optimizer = _setup(init_scale=2.0 ** 15)
    record = _RecordGrads()
    optimizer.add_hook(record)
    optimizer.add_hook(optimizers.GradientClipping(1.0))
    for _ in range(3):
        optimizer.update(link, X)
    assert record.seen == [4.0]  # two skipped steps ran no hook
    # clipping saw the unscaled norm 4 and scaled the step to norm 1
    numpy.testing.assert_allclose(link.W.array, 1 - 0.001, rtol=1e-6)


def test_a_loop_of_ones_own_scales_through_the_optimizer():
    link, optimizer = _setup(init_scale=2.0 ** 13)
    link.cleargrads()
    optimizer.scale_loss(link(X)).backward()
    assert link.W.grad[0, 0] == 4 * 2.0 ** 13
    optimizer.update()
    assert link.W.grad[0, 0] == 4
    numpy.testing.assert_allclose(link.W.array, 1 - 0.001 * 4, rtol=1e-6)


def test_nan_gradients_are_skipped_too():
    link, optimizer = _setup(init_scale=2.0)
    link.W.grad = numpy.full((1, 1), numpy.nan, numpy.float32)
    optimizer.update()
    assert link.W.array[0, 0] == 1 and optimizer.loss_scaler.loss_scale == 1.0


def test_state_goes_into_snapshots(tmp_path):
    link, optimizer = _setup(init_scale=2.0 ** 15, growth_interval=5)
    for _ in range(4):
        optimizer.update(link, X)
    npz.save_npz(tmp_path / 'snapshot.npz', optimizer)
    _, restored = _setup()
    restored.setup(link)
    npz.load_npz(tmp_path / 'snapshot.npz', restored)
    scaler = restored.loss_scaler
    assert (scaler.loss_scale, scaler.n_good_steps, scaler.n_skipped) == (2.0 ** 13, 2, 2)


def test_one_host_sync_per_step_however_many_parameters(stand_in):
    class _Many(Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                for i in range(5):
                    setattr(self, f'W{i}', Parameter(numpy.ones(3, numpy.float32)))

    link = _Many().to_device('cuda:0')
    optimizer = optimizers.SGD(lr=0.1).setup(link)
    optimizer.loss_scaler = optimizers.LossScaler()
    for param in link.params():
        param.grad = param.xp.ones(3, dtype=numpy.float32)
    with stand_in.count_syncs() as syncs:
        optimizer.update()
    from_scaler = {site: n for (kind, site), n in syncs.items() if 'loss_scaler' in site}
    assert sum(from_scaler.values()) == 1, syncs


@pytest.mark.parametrize('name,value', [
    ('init_scale', 0.0), ('init_scale', float('inf')), ('init_scale', 'big'),
    ('growth_factor', 1.0), ('growth_factor', float('nan')),
    ('backoff_factor', 1.0), ('backoff_factor', 0.0),
    ('growth_interval', 0), ('growth_interval', 2.5), ('growth_interval', True),
])
def test_bad_arguments_name_themselves(name, value):
    with pytest.raises(UsageError, match=f'LossScaler: {name} must'):
        optimizers.LossScaler(**{name: value})
