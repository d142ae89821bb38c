"""snapshot and snapshot_object: save the trainer (model, optimizer, iterator,
extensions) to resume from, or one object such as the model."""

import glob
import os
import re

from cvzoo import errors
from cvzoo.core.serializers import atomic_write, npz
from cvzoo.core.training import extension, finite_state

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
        self.last_written = None

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
            self._load_newest(found, trainer if self.target is None else self.target)

    def _load_newest(self, found, target):
        """Load ``found[-1]``. An unreadable newest snapshot stops the run: falling back
        to an older one would silently throw away training the user asked to keep."""
        try:
            self.loadfun(found[-1], target)
        except errors.CorruptFileError as exc:
            older = (f'the next older snapshot is {found[-2]}' if len(found) > 1
                     else 'there is no older snapshot')
            raise errors.CorruptFileError(
                f'{found[-1]}: cannot resume from this snapshot, the newest in its folder '
                f'({exc}); {older}: move the damaged file away to resume from the next '
                'older one, or start afresh without resuming') from exc
        self.loaded_from = found[-1]

    def __call__(self, trainer):
        if self.condition is not None and not self.condition():
            return
        target = trainer if self.target is None else self.target
        path = os.path.join(trainer.out, self.filename.format(trainer))
        culprit = finite_state.first_non_finite(_named_arrays(target, trainer))
        if culprit is not None:
            raise finite_state.NonFiniteError(
                f'snapshot: {culprit} holds NaN or inf at iteration '
                f'{trainer.updater.iteration}; {path} was not written '
                f'({last_finite_note(trainer)}); lower the learning rate or check the data')
        os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
        with atomic_write.atomic_write(path) as tmp_path:
            self.savefun(tmp_path, target)
        self.last_written = path
        if self.n_retains >= 0:
            for old in _matching_files(trainer.out, self.filename)[:-self.n_retains or None]:
                if old != path:
                    os.remove(old)


def _named_arrays(target, trainer):
    """The arrays of ``target`` that must be finite: a trainer's parameters and optimizer
    state, an optimizer's, or a link's parameters (nothing for other objects)."""
    if target is trainer:
        return finite_state.optimizer_arrays(trainer.updater.get_all_optimizers())
    if getattr(target, 'target', None) is not None and hasattr(target, 'update'):
        return finite_state.optimizer_arrays({type(target).__name__: target})
    if hasattr(target, 'namedparams'):
        return finite_state.link_arrays(target)
    return []


def last_finite_note(trainer):
    """Where the last finite state of ``trainer``'s run is, in words for a message: the
    newest snapshot it wrote (or resumed from), or that there is none.

    Every snapshot checks that what it writes is finite, so the newest one written holds
    the last finite state saved.
    """
    paths = [path for ext in trainer.extensions.values() if isinstance(ext, _Snapshot)
             for path in (ext.last_written or ext.loaded_from,) if path is not None]
    if not paths:
        return f'this run wrote no snapshot in {trainer.out}, so none holds a finite state'
    newest = max(paths, key=os.path.getmtime) if all(map(os.path.exists, paths)) else paths[0]
    return f'the last finite state is in {newest}'


def snapshot(filename='snapshot_iter_{.updater.iteration}', savefun=npz.save_npz,
             target=None, condition=None, autoload=False, n_retains=-1, *,
             loadfun=npz.load_npz):
    """Return an extension that saves the trainer (or ``target``) into ``trainer.out``.

    A trainer snapshot holds the model and optimizer state, the iterator's position and
    shuffling state, the extensions' state (the log, schedules), the elapsed time and
    NumPy's global random state. Loading it into a trainer built the same way,
    ``load_npz(path, trainer)``, makes the run go on bit-for-bit as if never stopped.
    The file is written under a temporary name and renamed when complete; temporary
    files that an interrupted run left behind are removed when training starts. A state
    holding NaN or inf (a parameter, or an optimizer state such as Adam's ``m``) is never
    written: the extension raises ``NonFiniteError`` naming the first such array and the
    newest snapshot written before. With ``autoload``, a newest snapshot that cannot be
    read raises ``CorruptFileError`` naming it and the next older one (it does not fall
    back silently).

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


def snapshot_object(target, filename, savefun=npz.save_npz, **kwargs):
    """Return an extension saving ``target`` (e.g. the model) to ``trainer.out/filename``.

    Args:
        target: a Link, Optimizer or anything ``savefun`` can save.
        filename (str): formatted with the trainer, e.g. ``'model_iter_{.updater.iteration}'``.
        savefun: ``savefun(path, target)``.
        **kwargs: ``condition``, ``n_retains``, ``autoload`` as for ``snapshot``.

    >>> ext = snapshot_object(object(), 'model_{.updater.epoch}.npz')
    >>> ext.trigger
    (1, 'epoch')
    """
    return snapshot(filename, savefun, target=target, **kwargs)
