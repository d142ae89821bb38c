"""argparse ``type=`` functions shared by the ``cvzoo`` command and the scripts of scripts/.

Each one refuses a value that cannot be right with an ``argparse.ArgumentTypeError``
saying what was expected and what came; argparse adds the option's name and
:class:`cvzoo.cli.entry.ArgumentParser` prints it as one line with exit status 2. They
run while the command line is parsed, so before any model or dataset is loaded.

>>> positive_int('3'), unit_interval('0.25'), positive_float('1e-3')
(3, 0.25, 0.001)
"""

import argparse
import math
import os


def int_at_least(minimum):
    """An argparse type: an int >= ``minimum``.

    >>> int_at_least(16)('64')
    64
    """
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(
                f'expected a whole number >= {minimum}, got {text!r}')
        return value
    return parse


positive_int = int_at_least(1)
positive_int.__doc__ = 'An int >= 1 (a batch size, an iteration count, a class count, a size).'
non_negative_int = int_at_least(0)
non_negative_int.__doc__ = 'An int >= 0 (worker processes, warm-up iterations).'


def finite_float(low=None, high=None, *, low_open=False, high_open=False):
    """An argparse type: a finite float in [low, high] (each bound optional, or open).

    >>> finite_float(0, 1, high_open=True)('0.5')
    0.5
    """
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and (value >= high if high_open else value > high)
        if not math.isfinite(value) or below or above:
            raise argparse.ArgumentTypeError(
                f'expected a finite number{_range_text(low, high, low_open, high_open)}, '
                f'got {text!r}')
        return value
    return parse


def _range_text(low, high, low_open, high_open):
    """' in [0, 1]', ' > 0', ' <= 1' or '' (no bound)."""
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f" {'<' if high_open else '<='} {high:g}"
    return ''


positive_float = finite_float(0, low_open=True)
positive_float.__doc__ = 'A finite float > 0 (a learning rate).'
unit_interval = finite_float(0, 1)
unit_interval.__doc__ = 'A finite float in [0, 1] (a score or IoU threshold, a fraction).'


def device(text):
    """A device that can be used here: 'cpu', or 'cuda:N' with CuPy installed and GPU N
    visible (CuPy is imported to check it); returns its name."""
    from cvzoo.core import backend  # noqa: PLC0415 - only a parse needs it

    try:
        return backend.require_device(text).name
    except (ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def existing_file(text):
    """The path of a file that exists (not a folder)."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f'expected a file, got the folder {text!r}')
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f'no such file {text!r}')
    return text


def output_path(text):
    """A file or folder to write, whose parent folder exists: the path comes back as given.

    The parent is checked here, before anything runs, so that a typo in it does not end
    a run after its work, nor create a tree of folders where none was meant.
    """
    if not text:
        raise argparse.ArgumentTypeError('expected a path, got an empty string')
    parent = os.path.dirname(os.path.normpath(text)) or os.curdir
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f'{parent!r} in {text!r} is a file, not a folder')
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f'the folder {parent!r} of {text!r} does not exist; '
                                         'create it first')
    return text


def output_file(text):
    """A file to write (:func:`output_path`) that is not a folder."""
    if text.endswith(('/', os.sep)) or os.path.isdir(text):
        raise argparse.ArgumentTypeError(f'expected a file name, got the folder {text!r}')
    return output_path(text)


def output_folder(text):
    """A folder to write into (:func:`output_path`), created later if absent; an existing
    file of that name is refused."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f'expected a folder, got the file {text!r}')
    return output_path(text)

