"""Helpers shared by test modules, importable as ``tests.helpers.<module>``.

pytest puts the repository root on ``sys.path`` (``pythonpath`` in pyproject.toml), so a
test writes ``from tests.helpers import darknet_cfgs`` instead of loading a file by path.
"""
