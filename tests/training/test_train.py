"""cvzoo.training.train: schedules, resume, the non-finite stop, evaluation and plots, the
saved model, the learning rate's scaling, and small_cnn learning scikit-learn's digits."""

import dataclasses
import fractions
import time

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import links as L
from cvzoo.core.training.extensions import NonFiniteError, read_log
from cvzoo.core.training.recipe import TrainingRecipe
from cvzoo.models import get_model
from cvzoo.models.detection.ssd.ssd_tiny import SSDTiny
from cvzoo.testing.small_models import build_small_model
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import evaluation, schedule, train
from cvzoo.training.train import run_lr

LABELS = ('a', 'b', 'c')


def _small_cnn(seed=0):
    return build_small_model('small_cnn', seed=seed, insize=8, width=4)[1]


def _examples(n=8, seed=0):
    return synthetic_examples('classification', len(LABELS), n=n, size=(10, 12), seed=seed)


def _train(model, out, **kwargs):
    kwargs = {'iterations': 4, 'batchsize': 2, 'progress': False, 'model_name': 'small_cnn',
              'model_kwargs': {'insize': 8, 'width': 4}, **kwargs}
    return train(model, _examples(), 'classification', LABELS, out=str(out), **kwargs)


# --- the schedules ---------------------------------------------------------------------

def _recipe(**fields):
    return TrainingRecipe(train_chain=L.Linear(1, 1), transform=None, **fields)


@pytest.mark.parametrize('fields, expected', [
    ({'schedule': 'multistep', 'lr_steps': (fractions.Fraction(1, 2),)},
     [1.0, 1.0, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1]),
    ({'schedule': 'multistep', 'lr_steps': (fractions.Fraction(1, 2),),
      'warmup_iterations': 2, 'warmup_start_ratio': 0.5},
     [0.5, 0.75, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1]),
    ({'schedule': 'cosine'}, [1.0, 0.9755, 0.9045, 0.7939, 0.6545, 0.5, 0.3455, 0.2061]),
    ({'schedule': 'poly'}, [1.0, 0.9095, 0.8181, 0.7254, 0.6314, 0.5359, 0.4384, 0.3384]),
    ({'schedule': 'constant', 'warmup_iterations': 2, 'warmup_start_ratio': 0.0},
     [0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
])
def test_schedule_values_at_each_iteration(fields, expected):
    shift = schedule.make_schedule(_recipe(**fields), 1.0, 10)
    assert [round(shift.compute(t), 4) for t in range(8)] == expected


def test_a_warmup_longer_than_a_quarter_of_the_run_is_shortened():
    shift = schedule.make_schedule(_recipe(schedule='cosine', warmup_iterations=500), 1.0, 100)
    assert shift.warmup_iter == 25


def test_a_constant_rate_without_warmup_needs_no_extension():
    assert schedule.make_schedule(_recipe(schedule='constant'), 1.0, 10) is None


def test_adam_schedules_its_alpha():
    assert schedule.make_schedule(_recipe(optimizer='adam'), 1.0, 10).attr == 'alpha'


def test_the_trainer_follows_the_recipe_schedule(tmp_path):
    model = _small_cnn()
    recipe = dataclasses.replace(model.training_recipe(), schedule='multistep',
                                 lr_steps=(fractions.Fraction(1, 2),), lr_factor=0.5)
    _train(model, tmp_path, recipe=recipe, lr=0.2)
    # each line logs the rate its iteration used; the step is at iteration 2 of 4
    assert [entry['lr'] for entry in read_log(tmp_path / 'log')] == [0.2, 0.2, 0.1, 0.1]


# --- learning rate and batch size -------------------------------------------------------

def test_the_default_rate_is_the_recipes_for_the_batch(tmp_path):
    model = _small_cnn()
    recipe = dataclasses.replace(model.training_recipe(), schedule='constant')
    _train(model, tmp_path, recipe=recipe, batchsize=4)
    assert read_log(tmp_path / 'log')[0]['lr'] == pytest.approx(recipe.lr * 4 / recipe.batchsize)


def test_the_rate_grows_with_the_processes_when_the_recipe_scales_it():
    recipe = _recipe(lr=0.1, batchsize=256)
    assert run_lr(recipe, None, 32, 8) == pytest.approx(0.1)
    assert run_lr(recipe, 0.01, 32, 4) == pytest.approx(0.04)
    assert run_lr(dataclasses.replace(recipe, scale_lr=False), None, 32, 8) == 0.1


# --- the run ----------------------------------------------------------------------------

def test_evaluation_plots_log_and_metrics(tmp_path):
    result = _train(_small_cnn(), tmp_path, iterations=5, val_dataset=_examples(4, seed=1),
                    evaluate_every=2)
    log = read_log(tmp_path / 'log')
    evaluated = [entry['iteration'] for entry in log if 'validation/main/top1' in entry]
    assert evaluated == [2, 4, 5]
    assert set(result.metrics) >= {'validation/main/top1'}
    assert 0 <= result.metrics['validation/main/top1'] <= 1
    for name in ('loss.png', 'metric.png', 'model_final.npz'):
        assert (tmp_path / name).is_file(), name
    assert result.elapsed_time > 0


def test_about_five_evaluations_by_default(tmp_path):
    _train(_small_cnn(), tmp_path, iterations=12, val_dataset=_examples(4, seed=1))
    log = read_log(tmp_path / 'log')
    assert [e['iteration'] for e in log if 'validation/main/top1' in e] == [2, 4, 6, 8, 10, 12]


def test_progress_prints_the_report_and_an_eta(tmp_path, capsys):
    _train(_small_cnn(), tmp_path, progress=True)
    captured = capsys.readouterr()
    assert 'main/loss' in captured.out
    assert 'ETA' in captured.err


def test_the_final_model_rebuilds_with_its_label_names(tmp_path):
    model = _small_cnn()
    _train(model, tmp_path)
    rebuilt = get_model('small_cnn', pretrained_model=str(tmp_path / 'model_final.npz'))
    assert rebuilt.label_names == LABELS
    model.to_device('cpu')
    imgs = [example[0] for example in _examples(2, seed=3)]
    numpy.testing.assert_allclose(rebuilt.predict(imgs), model.predict(imgs), rtol=1e-5)


class _Interrupted(Exception):
    pass


def _interrupted_after(n_iteration, converter):
    """``converter`` that stops the run at iteration ``n_iteration + 1``, as a kill would."""
    calls = []

    def convert(batch, device=None):
        calls.append(device)
        if len(calls) > n_iteration:
            raise _Interrupted
        return converter(batch, device)
    return convert


def test_resume_continues_as_an_uninterrupted_run(tmp_path):
    # the augmentation draws from the transform's own generator, which the snapshot keeps
    _train(_small_cnn(), tmp_path / 'whole')
    model = _small_cnn()
    recipe = model.training_recipe()
    recipe.converter = _interrupted_after(2, recipe.converter)
    with pytest.raises(_Interrupted):
        _train(model, tmp_path / 'resumed', recipe=recipe)
    _train(_small_cnn(seed=1), tmp_path / 'resumed', resume=True)
    whole = read_log(tmp_path / 'whole' / 'log')
    resumed = read_log(tmp_path / 'resumed' / 'log')
    assert [e['iteration'] for e in resumed] == [1, 2, 3, 4]
    assert [e['main/loss'] for e in resumed] == [e['main/loss'] for e in whole]


def test_a_non_finite_loss_stops_without_a_final_model(tmp_path):
    examples = _examples()
    examples[1] = (numpy.full_like(examples[1][0], numpy.nan), examples[1][1])
    with pytest.raises(NonFiniteError, match='main/loss'):
        train(_small_cnn(), examples, 'classification', LABELS, out=str(tmp_path),
              iterations=4, batchsize=8, progress=False)
    assert not (tmp_path / 'model_final.npz').exists()


# --- precision and CUDA graphs ------------------------------------------------------------

def _recording_autocast(monkeypatch):
    """The autocast dtypes the low-precision functions ran under."""
    from cvzoo.core import mixed_precision
    from cvzoo.core.config import config

    seen = set()
    cast = mixed_precision.cast_to_low_precision

    def recording_cast(*inputs):
        seen.add(None if config.autocast is None else config.autocast.name)
        return cast(*inputs)

    monkeypatch.setattr(mixed_precision, 'cast_to_low_precision', recording_cast)
    return seen


def test_autocast_runs_the_forward_in_low_precision(tmp_path, monkeypatch):
    seen = _recording_autocast(monkeypatch)
    _train(_small_cnn(), tmp_path, autocast='bfloat16')
    assert seen == {'bfloat16'}
    assert 'loss_scale' not in read_log(tmp_path / 'log')[-1]


def test_float16_scales_the_loss_unless_told_not_to(tmp_path, monkeypatch):
    seen = _recording_autocast(monkeypatch)
    _train(_small_cnn(), tmp_path / 'scaled', autocast='float16')
    _train(_small_cnn(), tmp_path / 'plain', autocast='float16', loss_scaling=False)
    assert seen == {'float16'}
    assert read_log(tmp_path / 'scaled' / 'log')[-1]['loss_scale'] > 1
    assert 'loss_scale' not in read_log(tmp_path / 'plain' / 'log')[-1]


def test_cuda_graph_trains_as_the_eager_run_does(tmp_path, stand_in):
    import warnings

    stand_in.install().random.seed(0)
    _train(_small_cnn(), tmp_path / 'eager', device='cuda:0')
    stand_in.install().random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)  # no capture refused, no fallback
        result = _train(_small_cnn(), tmp_path / 'graphed', device='cuda:0', cuda_graph=True)
    assert result.trainer.updater.graphed_update.captured
    logs = [read_log(tmp_path / run / 'log') for run in ('eager', 'graphed')]
    assert [e['main/loss'] for e in logs[1]] == [e['main/loss'] for e in logs[0]]


# --- refused arguments -----------------------------------------------------------------

@pytest.mark.parametrize('kwargs, named', [
    ({'iterations': 2, 'epochs': 1}, 'iterations, epochs'),
    ({'batchsize': 9}, 'batchsize'),
    ({'batchsize': 0}, 'batchsize'),
    ({'lr': float('nan')}, 'lr'),
    ({'autocast': 'float8'}, 'autocast'),
    ({'communicator': 'gloo'}, 'communicator'),
    ({'cuda_graph': True}, 'cuda_graph'),
    ({'evaluate_every': 0}, 'evaluate_every'),
])
def test_wrong_arguments_are_named(kwargs, named, tmp_path):
    with pytest.raises(errors.UsageError, match=named):
        train(_small_cnn(), _examples(), 'classification', LABELS, out=str(tmp_path),
              progress=False, **{'iterations': 1, **kwargs})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('name, label_names', [('small_cnn', ('a', 'b')),
                                               ('segnet_basic', ('a', 'b', 'c', 'd'))])
def test_label_names_of_another_class_count_are_refused(name, label_names, tmp_path):
    task, model = build_small_model(name)  # 3 classes
    with pytest.raises(errors.UsageError, match=f'label_names: {len(label_names)} names for a '
                       f'{type(model).__name__} of 3 classes'):
        train(model, synthetic_examples(task, 2), task, label_names, out=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_task_is_named(tmp_path):
    with pytest.raises(errors.UsageError, match="task: expected one of .* got 'depth'"):
        train(_small_cnn(), _examples(), 'depth', LABELS, out=str(tmp_path))


def test_an_unknown_recipe_key_is_named():
    with pytest.raises(errors.UsageError, match="unknown key 'crop'"):
        _small_cnn().training_recipe(crop=0.5)


def test_a_model_without_a_recipe_is_named(tmp_path):
    with pytest.raises(errors.UsageError, match='Linear declares no training_recipe'):
        train(L.Linear(2, 3), _examples(), 'classification', LABELS, out=str(tmp_path))


# --- evaluation ---------------------------------------------------------------------------

def test_detectors_are_evaluated_with_their_evaluate_preset():
    model = SSDTiny(n_fg_class=2, insize=64)
    model.use_preset('visualize')
    seen = []
    model.predict = lambda imgs: seen.append((model.score_thresh, model.nms_thresh)) or (
        [numpy.zeros((0, 4), numpy.float32)] * len(imgs),
        [numpy.zeros(0, numpy.int32)] * len(imgs), [numpy.zeros(0, numpy.float32)] * len(imgs))
    data = synthetic_examples('detection', 2, n=2)
    report = evaluation.make_evaluator('detection', model, data, ('x', 'y')).evaluate()
    assert seen == [(model.presets['evaluate']['score_thresh'],
                     model.presets['evaluate']['nms_thresh'])]
    assert model.score_thresh == model.presets['visualize']['score_thresh']
    assert 'validation/main/map' in report


# --- learning -----------------------------------------------------------------------------

def test_small_cnn_learns_digits_well_above_chance(tmp_path):
    pytest.importorskip('sklearn')
    from cvzoo.datasets import registry

    train_set, val_set, label_names = registry.load_classification_training_splits('digits')
    start = time.monotonic()
    model = build_small_model('small_cnn', n_class=10, insize=8)[1]
    result = train(model, train_set, 'classification', label_names, out=str(tmp_path),
                   val_dataset=val_set, iterations=60, progress=False)
    assert result.metrics['validation/main/top1'] >= 0.8  # chance: 0.1
    assert time.monotonic() - start < 120
