"""Every `cvzoo ...` row of README.md's Command line table parses with the real CLI."""

import pathlib
import re
import shlex

import pytest

from cvzoo.cli import main

README = pathlib.Path(__file__).resolve().parents[2] / 'README.md'


def _table_commands():
    text = README.read_text()
    table = text.split('## Command line', 1)[1].split('\n## ', 1)[0]
    return re.findall(r'^\| `(cvzoo [^`]+)` \|', table, flags=re.MULTILINE)


COMMANDS = _table_commands()


def test_the_table_lists_the_subcommands():
    assert {c.split()[1] for c in COMMANDS} == {'models', 'download', 'predict', 'export', 'train'}


@pytest.mark.parametrize('command', COMMANDS, ids=range(len(COMMANDS)))
def test_each_row_parses_with_every_optional_flag(command):
    plain = command.replace('[', '').replace(']', '').replace('IMAGE...', 'a.png')
    argv = shlex.split(plain.replace('--size H W', '--size 480 640'))
    args = main._parser().parse_args(argv[1:])  # argparse exits on an unknown flag
    assert args.command == argv[1]
