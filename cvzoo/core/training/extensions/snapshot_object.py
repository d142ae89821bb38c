"""snapshot_object: save one object (usually the model) during training."""

from cvzoo.core.serializers import npz
from cvzoo.core.training.extensions import snapshot as snapshot_module


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
    return snapshot_module.snapshot(filename, savefun, target=target, **kwargs)
