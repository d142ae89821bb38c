"""The names of Chainer's training guides: ``from cvzoo.core import training`` and
``from cvzoo.core.training import extensions`` reach every public class and function."""

import ast
import importlib
import pathlib

import pytest

from cvzoo.core import training

TRAINING = pathlib.Path(training.__file__).parent

# name typed in the guides -> the module that defines it
GUIDE_NAMES = {
    'Trainer': 'trainer',
    'updaters.StandardUpdater': 'updaters.standard_updater',
    'updaters.ParallelUpdater': 'updaters.parallel_updater',
    'iterators.SerialIterator': 'iterators.serial_iterator',
    'iterators.MultiprocessIterator': 'iterators.multiprocess_iterator',
    'triggers.IntervalTrigger': 'triggers',
    'triggers.ManualScheduleTrigger': 'triggers',
    'triggers.MaxValueTrigger': 'triggers',
    'triggers.MinValueTrigger': 'triggers',
    'extensions.LogReport': 'extensions.log_report',
    'extensions.PrintReport': 'extensions.print_report',
    'extensions.ProgressBar': 'extensions.progress_bar',
    'extensions.PlotReport': 'extensions.plot_report',
    'extensions.Evaluator': 'extensions.evaluator',
    'extensions.snapshot': 'extensions.snapshots',
    'extensions.snapshot_object': 'extensions.snapshots',
    'extensions.ExponentialShift': 'extensions.exponential_shift',
    'extensions.LinearShift': 'extensions.linear_shift',
    'extensions.StepShift': 'extensions.step_shift',
    'extensions.MultistepShift': 'extensions.multistep_shift',
    'extensions.WarmupShift': 'extensions.warmup_shift',
    'extensions.CosineShift': 'extensions.cosine_shift',
    'extensions.FailOnNonNumber': 'extensions.fail_on_non_number',
    'extensions.observe_lr': 'extensions.value_observation',
    'extensions.observe_value': 'extensions.value_observation',
}


def _resolve(dotted):
    value = training
    for part in dotted.split('.'):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize('name, module', GUIDE_NAMES.items(), ids=list(GUIDE_NAMES))
def test_the_guides_names_are_the_defining_modules_objects(name, module):
    defining = importlib.import_module(f'cvzoo.core.training.{module}')
    assert _resolve(name) is getattr(defining, name.rsplit('.', 1)[-1])


def test_from_training_import_extensions():
    from cvzoo.core.training import extensions

    assert extensions is training.extensions
    assert callable(extensions.snapshot) and callable(extensions.observe_lr)


def _public_definitions(path):
    """Public classes and functions defined at the top of a module."""
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith('_')}


# helpers that are public in their module but not part of the extension vocabulary
NOT_EXPORTED = {'plot_report.nice_ticks', 'snapshots.last_finite_note'}


@pytest.mark.parametrize('package', ['extensions', 'iterators', 'updaters'])
def test_every_public_class_and_function_of_a_subpackage_is_exported(package):
    exported = importlib.import_module(f'cvzoo.core.training.{package}')
    missing = []
    for path in sorted((TRAINING / package).glob('[!_]*.py')):
        for name in _public_definitions(path):
            if f'{path.stem}.{name}' in NOT_EXPORTED:
                continue
            if name not in exported.__all__ or not hasattr(exported, name):
                missing.append(f'{path.stem}.{name}')
    assert not missing, f'cvzoo.core.training.{package} does not export {missing}'


def test_no_module_of_extensions_is_shadowed_by_an_exported_name():
    """``extensions.<name>`` is one thing: a module named as a function it exports would be
    replaced by that function on the package (and ``from ... import <module>`` breaks)."""
    modules = {path.stem for path in (TRAINING / 'extensions').glob('[!_]*.py')}
    from cvzoo.core.training import extensions

    assert not modules & set(extensions.__all__)


def test_all_lists_only_real_names():
    for package in (training, training.extensions, training.iterators, training.updaters,
                    training.triggers):
        assert [name for name in package.__all__ if not hasattr(package, name)] == []
