"""How every program of cvzoo ends: the ``cvzoo`` command and each script of scripts/.

One rule for user mistakes. A mistake in what the user typed or gave (an argument, an
environment variable, a file, a folder) reaches the user as ONE line,
``PROG: error: MESSAGE``, on stderr, and the program exits with status 2:

- argparse's own refusals (an unknown option, a value its ``type`` refuses), through
  :class:`ArgumentParser`, which prints no usage block;
- a :class:`cvzoo.errors.CvzooError` raised while the program runs, through
  :func:`run` (scripts) or :func:`call` (the ``cvzoo`` command's subcommands).

Any other exception is a bug of cvzoo and propagates with its traceback (so does a
``DeviceMismatchError``: the program made both arrays). A train script
also names the run's own failure (a non-finite loss) in one line, with status 1.

A script ends with::

    if __name__ == '__main__':
        entry.run(main)
"""

import argparse
import os
import sys

from cvzoo import errors

USAGE_STATUS = 2  # argparse's status for a refused command line
FAILED_STATUS = 1  # a run that stopped on its own (e.g. a non-finite loss)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose refusals are one line, ``PROG: error: MESSAGE``, status 2.

    (argparse prints its usage block before the message; the message alone names the
    option, and ``--help`` shows the usage.) Subparsers are of this class too.
    """

    def error(self, message):
        """Print ``PROG: error: MESSAGE`` on stderr and exit with status 2."""
        self.exit(USAGE_STATUS, f'{self.prog}: error: {one_line(message)}\n')


def one_line(message):
    r"""``message`` on one line: its lines joined by '; ', or by ' ' after a colon.

    >>> one_line('w.npz does not fit:\n  missing: a/W\n  unexpected: b')
    'w.npz does not fit: missing: a/W; unexpected: b'
    """
    text = ''
    for line in str(message).splitlines():
        line = line.strip()
        if line:
            text += line if not text else ('' if text.endswith(':') else ';') + ' ' + line
    return text


def call(prog, function, *args, failures=None):
    """Run ``function(*args)`` as a program's body and return its exit status.

    Args:
        prog (str): the program's name, first on the error line (e.g. ``'cvzoo predict'``).
        function (callable): returns an int (the exit status) or anything else (status 0:
            an evaluation's report, a train script's score).
        *args: its arguments.
        failures (dict or None): exception class -> text appended to its line, for the
            ways a run can fail that are neither a user mistake nor a bug (a train script:
            ``{NonFiniteError: 'model_final.npz was not written'}``); status 1.

    Returns:
        int: the status; 2 after a :class:`cvzoo.errors.CvzooError`, whose message was
        printed as ``PROG: error: MESSAGE``.
    """
    failures = failures or {}
    try:
        status = function(*args)
    except errors.DeviceMismatchError:
        raise  # the program made both arrays: a bug, not the user's mistake
    except errors.CvzooError as exc:
        _print_error(prog, exc)
        return USAGE_STATUS
    except tuple(failures) as exc:
        note = next(text for kind, text in failures.items() if isinstance(exc, kind))
        _print_error(prog, f'{exc}; {note}' if note else exc)
        return FAILED_STATUS
    # bool is an int, but a True/False result is a value, not an exit status
    return status if isinstance(status, int) and not isinstance(status, bool) else 0


def run(main, failures=None):
    """Run a script's ``main(argv)`` on the command line and exit with its status.

    ``main`` takes ``argv`` (None: ``sys.argv[1:]``) and parses it with an
    :class:`ArgumentParser`; see :func:`call` for the status and ``failures``.
    """
    sys.exit(call(os.path.basename(sys.argv[0]), main, None, failures=failures))


def _print_error(prog, exc):
    print(f'{prog}: error: {one_line(exc)}', file=sys.stderr)
