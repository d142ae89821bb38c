"""cvzoo: a computer-vision model zoo on its own define-by-run autograd engine."""

__version__ = '0.1.0.dev0'
