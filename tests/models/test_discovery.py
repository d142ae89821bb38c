"""Discovery imports every model module and nothing of the datasets but label names."""

import json
import subprocess
import sys

import pytest

_LOADED_AFTER_DISCOVERY = (
    'import json, sys\n'
    'from cvzoo.models import list_models\n'
    'list_models()\n'
    "print(json.dumps({name: hasattr(module, '__path__')\n"
    "                  for name, module in sorted(sys.modules.items())}))\n"
)


@pytest.fixture(scope='module')
def loaded_modules():
    """The modules a fresh interpreter holds after ``list_models()``: name -> is a package."""
    result = subprocess.run([sys.executable, '-c', _LOADED_AFTER_DISCOVERY],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_discovery_loads_no_dataset_loader(loaded_modules):
    datasets = [name for name in loaded_modules if name.startswith('cvzoo.datasets')]
    assert 'cvzoo.datasets.voc.voc_label_names' in datasets  # model modules use them
    loaders = [name for name in datasets if not (
        name.endswith(('_label_names', '_keypoint_names')) or loaded_modules[name])]
    assert loaders == []


def test_discovery_loads_no_pillow(loaded_modules):
    assert 'PIL' not in loaded_modules
