"""snapshot: save the trainer (model, optimizer, iterator, extensions) to resume from."""

import glob
import os
import re

from cvzoo.core.serializers import atomic_write, npz
from cvzoo.core.training import extension

# Chainer runs snapshots last, after LogReport, so the saved log holds the newest entry.
PRIORITY_SNAPSHOT = -100


def _glob_pattern(filename):
    """'snapshot_iter_{.updater.iteration}' -> 'snapshot_iter_*'."""
    return re.sub(r'\{[^{}]*\}', '*', filename)


def _matching_files(folder, filename):
    paths = glob.glob(os.path.join(glob.escape(folder), _glob_pattern(filename)))
    return sorted((p for p in paths if not os.path.basename(p).startswith('.')),
                  key=os.path.getmtime)


class _Snapshot(extension.Extension):
    trigger = (1, 'epoch')
    priority = PRIORITY_SNAPSHOT

    def __init__(self, filename, savefun, loadfun, target, condition, autoload, n_retains):
        self.filename = filename
        self.savefun = savefun
        self.loadfun = loadfun
        self.target = target
        self.condition = condition
        self.autoload = autoload
        self.n_retains = n_retains
        self.loaded_from = None

    def initialize(self, trainer):
        """Remove temporary files of interrupted snapshots; with autoload, load the newest
        matching snapshot in ``trainer.out``, if any."""
        pattern = _glob_pattern(self.filename)
        atomic_write.remove_orphans(os.path.join(trainer.out, os.path.dirname(pattern)),
                                    os.path.basename(pattern))
        if not self.autoload:
            return
        found = _matching_files(trainer.out, self.filename)
        if found:
            self.loadfun(found[-1], trainer if self.target is None else self.target)
            self.loaded_from = found[-1]

    def __call__(self, trainer):
        if self.condition is not None and not self.condition():
            return
        target = trainer if self.target is None else self.target
        path = os.path.join(trainer.out, self.filename.format(trainer))
        os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
        with atomic_write.atomic_write(path) as tmp_path:
            self.savefun(tmp_path, target)
        if self.n_retains >= 0:
            for old in _matching_files(trainer.out, self.filename)[:-self.n_retains or None]:
                if old != path:
                    os.remove(old)


def snapshot(filename='snapshot_iter_{.updater.iteration}', savefun=npz.save_npz,
             target=None, condition=None, autoload=False, n_retains=-1, *,
             loadfun=npz.load_npz):
    """Return an extension that saves the trainer (or ``target``) into ``trainer.out``.

    A trainer snapshot holds the model and optimizer state, the iterator's position and
    shuffling state, the extensions' state (the log, schedules), the elapsed time and
    NumPy's global random state. Loading it into a trainer built the same way,
    ``load_npz(path, trainer)``, makes the run go on bit-for-bit as if never stopped.
    The file is written under a temporary name and renamed when complete; temporary
    files that an interrupted run left behind are removed when training starts.

    Args:
        filename (str): a name formatted with the trainer, e.g. ``'snapshot_{.updater.epoch}'``.
        savefun: ``savefun(path, target)``.
        target: what to save; default the trainer.
        condition: a callable without arguments; the snapshot is taken only when it
            returns True.
        autoload (bool): when training starts, load the newest file in ``trainer.out``
            matching ``filename`` (with ``loadfun``), if there is one.
        n_retains (int): keep only the newest ``n_retains`` matching files (-1: all).
        loadfun: ``loadfun(path, target)`` for autoload.

    Returns:
        an Extension (trigger ``(1, 'epoch')``, runs after every other extension).
    """
    if not isinstance(n_retains, int) or n_retains < -1 or n_retains == 0:
        raise ValueError(f'n_retains: expected -1 (keep all) or a positive int, got {n_retains!r}')
    return _Snapshot(filename, savefun, loadfun, target, condition, autoload, n_retains)
