"""Every registered model trains through the contract: two iterations of its recipe.

For each ``list_models()`` entry, the model is built small (``cvzoo.testing.
small_models``), given a few random examples of its task's layout (``cvzoo.testing.
synthetic_examples``) and trained by ``cvzoo.training.train`` with its own recipe
(``model.training_recipe``), batches of 2, for two iterations: on the CPU, and on
``'cuda:1'`` of the CuPy stand-in (``pytest --fake-cuda``; ``'cuda:0'`` on a machine
with one GPU) while ``'cuda:0'`` is current. The loss is finite, the parameters with a
gradient changed and stayed on the device, and the trained model goes to
``save_trained_model`` (not written here: compressing a ResNet-101 takes half a minute;
``tests/training/test_train.py`` writes and rebuilds one). A model registered without a
recipe fails here.
"""

import importlib
import shutil

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.core.training.extensions import read_log
from cvzoo.models import list_models
from cvzoo.testing import small_models
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import train
from tests.helpers.registry_runs import small_for_training



@pytest.fixture(autouse=True)
def _remove_snapshots(tmp_path):
    """Remove each run's snapshots after the test, passed or failed: uncompressed, those of
    the large models take hundreds of MB each, tens of GB over the registry."""
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture
def saved(monkeypatch):
    """The (model, name, kwargs) that ``train`` hands to ``save_trained_model``."""
    calls = []
    module = importlib.import_module('cvzoo.training.train')
    monkeypatch.setattr(module, 'save_trained_model',
                        lambda model, path, name, **kwargs: calls.append((model, name, kwargs)))
    return calls


def _train_twice(name, model, task, device, out):
    n_class = small_models.n_class_of(name)
    examples = synthetic_examples(task, n_class, n=4, n_point=getattr(model, 'n_point', 17))
    label_names = [f'class{k}' for k in range(n_class)]
    before = {path: backend.to_numpy(param.array).copy()
              for path, param in model.namedparams() if param.array is not None}
    result = train(model, examples, task, label_names, out=str(out), iterations=2,
                   batchsize=2, device=device, progress=False, model_name=name,
                   model_kwargs=small_models.small_kwargs(name))
    return result, before


def _check_trained(name, model, result, before, out, saved):
    log = read_log(out / 'log')
    assert [entry['iteration'] for entry in log] == [1, 2]
    assert all(numpy.isfinite(entry['main/loss']) for entry in log)
    # a recipe's freeze disables updates (a pretrained stem), not gradients
    with_grad = [path for path, param in model.namedparams()
                 if param.grad is not None and path in before
                 and param.update_rule is not None and param.update_rule.enabled
                 and backend.to_numpy(param.grad).any()]
    assert with_grad, 'no parameter got a gradient'
    params = dict(model.namedparams())
    changed = [path for path in with_grad
               if not numpy.array_equal(before[path], backend.to_numpy(params[path].array))]
    assert len(changed) >= 0.9 * len(with_grad), \
        f'{len(with_grad) - len(changed)} of {len(with_grad)} parameters did not change'
    assert len(saved) == 1 and saved[0][0] is model and saved[0][1] == name
    assert result.elapsed_time is not None


@pytest.mark.parametrize('name', list_models())
def test_two_iterations_on_the_cpu(name, build_small_model, saved, tmp_path):
    task, model = small_for_training(name, build_small_model)
    result, before = _train_twice(name, model, task, 'cpu', tmp_path)
    _check_trained(name, model, result, before, tmp_path, saved)


@pytest.mark.parametrize('name', list_models())
def test_two_iterations_on_the_second_gpu(name, build_small_model, gpu_pair, saved,
                                         tmp_path):
    current, target = gpu_pair
    task, model = small_for_training(name, build_small_model)
    current.use()
    result, before = _train_twice(name, model, task, str(target), tmp_path)
    _check_trained(name, model, result, before, tmp_path, saved)
    left = [path for path, param in model.namedparams() if param.device != target]
    assert left == [], f'parameters that left {target}: {left[:5]}'
    assert backend.get_device_from_array(numpy.zeros(1)).kind == 'cpu'
