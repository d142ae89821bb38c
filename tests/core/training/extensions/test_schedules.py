"""Schedules against hand-computed values, in a trainer, and across a snapshot."""

import math

import pytest

from cvzoo import errors
from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions.cosine_shift import CosineShift
from cvzoo.core.training.extensions.exponential_shift import ExponentialShift
from cvzoo.core.training.extensions.linear_shift import LinearShift
from cvzoo.core.training.extensions.multistep_shift import MultistepShift
from cvzoo.core.training.extensions.step_shift import StepShift
from cvzoo.core.training.extensions.warmup_shift import WarmupShift

CASES = [
    (StepShift('lr', 0.5, 2, init=0.8), [0.8, 0.8, 0.4, 0.4, 0.2, 0.2]),
    (StepShift('lr', 0.5, 2, init=0.8, target=0.3), [0.8, 0.8, 0.4, 0.4, 0.3, 0.3]),
    (MultistepShift('lr', 0.1, [1, 4], init=1.0), [1.0, 0.1, 0.1, 0.1, 0.01, 0.01]),
    (ExponentialShift('lr', 0.5, init=1.0), [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]),
    (ExponentialShift('lr', 2.0, init=1.0, target=5.0), [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]),
    (LinearShift('lr', (0.1, 0.5), (1, 5)), [0.1, 0.1, 0.2, 0.3, 0.4, 0.5]),
    (WarmupShift('lr', 0.0, 4, init=0.4), [0.0, 0.1, 0.2, 0.3, 0.4, 0.4]),
    (CosineShift('lr', 4, init=1.0),
     [1.0, (1 + math.cos(math.pi / 4)) / 2, 0.5, (1 + math.cos(3 * math.pi / 4)) / 2, 0.0, 0.0]),
    (CosineShift('lr', 5, min_value=0.2, init=1.0, warmup_iter=1, warmup_start=0.0),
     [0.0, 1.0, 0.2 + 0.8 * (1 + math.cos(math.pi / 4)) / 2, 0.6,
      0.2 + 0.8 * (1 + math.cos(3 * math.pi / 4)) / 2, 0.2]),
]
IDS = ['step', 'step_target', 'multistep', 'exponential', 'exponential_up_target', 'linear',
       'warmup', 'cosine', 'cosine_warmup_min']


@pytest.mark.parametrize('shift, expected', CASES, ids=IDS)
def test_compute_matches_hand_values(shift, expected):
    assert [shift.compute(t) for t in range(6)] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize('shift, expected', CASES, ids=IDS)
def test_lr_seen_by_each_update(make_trainer, shift, expected):
    """Update k (1-based) runs with compute(k - 1): initialize sets t = 0."""
    trainer = make_trainer(stop=(5, 'iteration'))
    optimizer = trainer.updater.get_optimizer('main')
    seen = []
    original = optimizer.update

    def record(*args, **kwargs):
        seen.append(optimizer.lr)
        return original(*args, **kwargs)

    optimizer.update = record
    trainer.extend(shift)
    trainer.run()
    assert seen == pytest.approx(expected[:5], abs=1e-12)
    assert optimizer.lr == pytest.approx(expected[5], abs=1e-12)


def test_init_defaults_to_the_optimizer_value(make_trainer):
    trainer = make_trainer(stop=(2, 'iteration'), lr=0.4)
    trainer.extend(ExponentialShift('lr', 0.5))
    trainer.run()
    assert trainer.updater.get_optimizer('main').lr == pytest.approx(0.1)


def test_state_survives_a_snapshot(make_trainer, tmp_path):
    trainer = make_trainer(stop=(3, 'iteration'))
    trainer.extend(StepShift('lr', 0.5, 2, init=0.8))
    trainer.run()
    npz.save_npz(tmp_path / 'snap', trainer)
    resumed = make_trainer(stop=(5, 'iteration'))
    shift = StepShift('lr', 0.5, 2, init=0.8)
    resumed.extend(shift)
    npz.load_npz(tmp_path / 'snap', resumed)
    assert shift.t == 3
    resumed.run()
    assert resumed.updater.get_optimizer('main').lr == pytest.approx(0.2)


@pytest.mark.parametrize('make, match', [
    (lambda: StepShift('lr', 0.5, 0), 'step'),
    (lambda: MultistepShift('lr', 0.5, [3, 1]), 'step_value'),
    (lambda: ExponentialShift('lr', 0.0), 'rate'),
    (lambda: LinearShift('lr', (0, 1), (3, 3)), 'time_range'),
    (lambda: WarmupShift('lr', 0.0, 0), 'warmup_iter'),
    (lambda: CosineShift('lr', 3, warmup_iter=3), 'warmup_iter'),
], ids=['step', 'multistep', 'exponential', 'linear', 'warmup', 'cosine'])
def test_bad_arguments_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize('shift', [ExponentialShift('lr', 0.5, init=float('nan')),
                                   LinearShift('lr', (0.1, -0.1), (0, 4))],
                         ids=['nan_init', 'linear_to_negative'])
def test_a_schedule_that_sets_a_bad_learning_rate_stops_where_it_sets_it(make_trainer, shift):
    trainer = make_trainer(stop=(6, 'iteration'))
    trainer.extend(shift)
    with pytest.raises(errors.UsageError, match='^lr: expected a finite number >= 0'):
        trainer.run()
    assert trainer.updater.iteration < 4
