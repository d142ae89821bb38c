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


def test_ci_runs_the_readme_test_commands_first_as_printed():
    """.ci/run's first step runs each line of the README's test section verbatim (on a
    bare environment: the references come in its second step)."""
    readme = (ROOT / 'README.md').read_text()
    section = readme.split('## Run the tests\n', 1)[1]
    block = section.split('```bash\n', 1)[1].split('```', 1)[0]
    commands = [line.strip() for line in block.splitlines() if line.strip()]
    assert commands == ["pip install -e '.[test]'", 'python -m pytest --fake-cuda']
    ci = (ROOT / '.ci' / 'run').read_text()
    step_1 = ci.split('== step 1', 1)[1].split('== step 2', 1)[0]
    for command in commands:
        assert command in step_1, command
    assert 'torch' not in step_1.split('pip install', 1)[1]
