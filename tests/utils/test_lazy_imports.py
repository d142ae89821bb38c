"""cvzoo.utils: helpers importable from the package, imported only when first used."""

import re
import subprocess
import sys

import pytest

import cvzoo.utils


def _listed_helpers():
    """(module, name) for each helper the package docstring lists (env names aside)."""
    listed = []
    table = re.findall(r'^    (\w+) +(.*(?:\n {16}.*)*)', cvzoo.utils.__doc__, re.M)
    for module, names in table:
        if module == 'paths':
            continue
        for name in re.findall(r'\w+', names):
            if name not in ('and', 'on', 'stderr'):
                listed.append((module, name))
    return listed


def test_the_docstring_lists_every_module():
    modules = {module for module, _ in _listed_helpers()} | {'paths'}
    assert modules == {'paths', 'progress', 'image', 'bbox', 'nms', 'download', 'file_lock',
                       'visualize'}
    assert len(_listed_helpers()) == 23


@pytest.mark.parametrize('module, name', _listed_helpers(),
                         ids=[name for _, name in _listed_helpers()])
def test_each_listed_helper_resolves(module, name):
    import importlib

    defined_in = importlib.import_module(f'cvzoo.utils.{module}')
    value = getattr(cvzoo.utils, name)
    if name in ('download', 'progress'):  # module names win over their functions
        assert value is defined_in
    else:
        assert value is getattr(defined_in, name)
    assert name in dir(cvzoo.utils)


def test_from_import_works_as_in_chainercv():
    from cvzoo.utils import FileLock, non_maximum_suppression, read_image  # noqa: F401
    from cvzoo.utils import download

    assert callable(read_image) and callable(non_maximum_suppression)
    assert download.__name__ == 'cvzoo.utils.download'


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match='read_imag'):
        cvzoo.utils.read_imag  # noqa: B018
    with pytest.raises(ImportError):
        from cvzoo.utils import no_such_helper  # noqa: F401


def _fresh_modules(statement):
    """The cvzoo, PIL and requests modules a fresh interpreter has after ``statement``."""
    code = (f'import sys\n{statement}\n'
            'print(" ".join(sorted(m for m in sys.modules '
            'if m.split(".")[0] in ("cvzoo", "PIL", "requests"))))')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120, check=True)
    return set(done.stdout.split())


def test_importing_the_package_imports_no_helper_module():
    loaded = _fresh_modules('import cvzoo.utils')
    assert not any(m.startswith(('PIL', 'requests')) for m in loaded), loaded
    assert not any(m.startswith('cvzoo.utils.') for m in loaded), loaded


def test_a_helper_imports_only_its_module():
    loaded = _fresh_modules('from cvzoo.utils import bbox_iou')
    assert 'cvzoo.utils.bbox' in loaded
    assert not {'cvzoo.utils.image', 'cvzoo.utils.download', 'cvzoo.utils.visualize'} & loaded
    assert not any(m.startswith('requests') for m in loaded), loaded
