"""Load a file of scripts/ or bench/ as a module, so tests call its functions directly.

The one place tests load a module by its path: scripts and benchmarks are programs, not
part of an importable package.
"""

import importlib.util
import pathlib
import runpy
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / 'scripts'
BENCH = ROOT / 'bench'


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_script(name):
    """The module of ``scripts/<name>.py`` (e.g. ``load_script('train_yolo')``)."""
    return _load(SCRIPTS / f'{name}.py', f'cvzoo_script_{name}')


def load_bench(name):
    """The module of ``bench/<name>.py`` (e.g. ``load_bench('bench_models')``)."""
    return _load(BENCH / f'{name}.py', f'cvzoo_bench_{name}')


def run_script(name, argv, monkeypatch):
    """Run ``scripts/<name>.py`` as a program, as ``python scripts/<name>.py ARGV`` does
    (its ``if __name__ == '__main__'`` block, in this process); return its exit status."""
    monkeypatch.setattr(sys, 'argv', [str(SCRIPTS / f'{name}.py'), *argv])
    try:
        runpy.run_path(str(SCRIPTS / f'{name}.py'), run_name='__main__')
    except SystemExit as exc:
        return exc.code
    return 0


def load_tool(name):
    """The module of ``tools/<name>.py`` (e.g. ``load_tool('fault_sweep')``)."""
    return _load(ROOT / 'tools' / f'{name}.py', f'cvzoo_tool_{name}')
