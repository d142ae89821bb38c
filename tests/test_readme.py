"""README.md stays true: its model table is the registry's, its commands exist."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_script():
    spec = importlib.util.spec_from_file_location(
        'update_model_table', ROOT / 'scripts' / 'update_model_table.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_table_matches_the_registry():
    script = _load_script()
    text = (ROOT / 'README.md').read_text()
    assert script.BEGIN in text and script.END in text
    assert script.render(text) == text, 'run: python scripts/update_model_table.py'


def test_readme_test_command_is_the_one_ci_runs():
    readme = (ROOT / 'README.md').read_text()
    ci = (ROOT / '.ci' / 'run').read_text()
    assert 'python -m pytest' in readme and 'python -m pytest' in ci
