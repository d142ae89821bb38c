"""README.md stays true: its model table is the registry's, its commands exist."""

import pathlib

from tests.helpers.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _table_rows(text, script):
    table = text.split(script.BEGIN)[1].split(script.END)[0]
    return [line for line in table.strip().splitlines()[2:]]


def test_model_table_claims_only_what_the_registry_says():
    """Every README row is a registry row, verbatim (scores, keys, sources).

    A model registered after the table was last generated is allowed to be missing
    (run python scripts/update_model_table.py); a stale or wrong row is not.
    """
    script = load_script('update_model_table')
    text = (ROOT / 'README.md').read_text()
    assert script.BEGIN in text and script.END in text
    registry = set(_table_rows(script.render(text), script))
    stale = [row for row in _table_rows(text, script) if row not in registry]
    assert not stale, f'README rows the registry does not back (regenerate the table): {stale}'


def test_readme_test_command_is_the_one_ci_runs():
    readme = (ROOT / 'README.md').read_text()
    ci = (ROOT / '.ci' / 'run').read_text()
    assert 'python -m pytest' in readme and 'python -m pytest' in ci
