"""Pretrained-weight resolution: the one helper behind every model's ``pretrained_model=``.

A model constructor that takes ``pretrained_model`` (a key of its zoo entries, a local
file or None) and a class count (``n_class`` or ``n_fg_class``) does, in this order
(as ChainerCV's ``prepare_pretrained_model`` and torchvision's ``_ovewrite_value_param``):

1. :func:`settle_n_class`: a key of the model's own weights fixes the class count the
   heads are built with; otherwise the count asked for, or the model's default;
2. build its layers with that count (the model's own code);
3. :func:`load_pretrained`: load the key or the file, take the entry's label names,
   and re-make the heads when the count asked for differs from the built one
   (fine-tuning: every other layer keeps the loaded weights).

>>> import cvzoo.core.links as L
>>> class Toy(L.Chain):
...     weights = {}
>>> settle_n_class(Toy, None, None, default=20)
(None, 20)
"""

from cvzoo.models import zoo


def weights_entry(model_class, pretrained_model, backbone_keys=()):
    """The zoo entry of a key that holds the whole model.

    Args:
        model_class: the model class (or an instance).
        pretrained_model: a key, a path or None.
        backbone_keys (tuple of str): keys whose weights fill only the backbone (their
            class count is the backbone's, not the model's).

    Returns:
        Weights or None: None for a backbone key, a path, an unknown key or None.
    """
    entries = getattr(model_class, 'weights', None) or {}
    if isinstance(pretrained_model, str) and pretrained_model in entries \
            and pretrained_model not in backbone_keys:
        return entries[pretrained_model]
    return None


def settle_n_class(model_class, pretrained_model, n_class, default, backbone_keys=()):
    """The zoo entry of ``pretrained_model`` and the class count to build the heads with.

    The entry's count wins (a different ``n_class`` re-makes the heads after loading,
    see :func:`load_pretrained`); without an entry it is ``n_class``, else ``default``.

    Args:
        model_class: the model class (or an instance).
        pretrained_model: a key of ``model_class.weights``, a local file or None.
        n_class (int or None): the count asked for.
        default (int or None): the count without an entry and without ``n_class``;
            None makes ``n_class`` required then.
        backbone_keys (tuple of str): as in :func:`weights_entry`.

    Returns:
        tuple: ``(entry, n_built)``, the Weights entry (None for a backbone key, a file
        or None) and an int.

    Raises:
        ValueError: no count is known (``default`` None, no entry and no ``n_class``).
    """
    entry = weights_entry(model_class, pretrained_model, backbone_keys)
    if entry is not None:
        return entry, entry.n_class
    if n_class:
        return None, n_class
    if default is None:
        raise ValueError(f'n_class: expected an int when pretrained_model is not a key of '
                         f'{sorted(getattr(model_class, "weights", None) or {})}, got {n_class!r} '
                         f'(pretrained_model={pretrained_model!r})')
    return None, default


def load_pretrained(model, pretrained_model, n_class, n_built, entry, reset_head, *,
                    source=None):
    """Load ``pretrained_model`` into a model built with ``n_built`` classes.

    The weights load through the model's own ``load_pretrained(path_or_key, source)``
    when it has one, else through :func:`cvzoo.models.zoo.load_weights`. The model
    then takes the entry's label names, and a detector its box convention (see
    :func:`cvzoo.models.detection.detector.as_continuous`); when ``n_class`` is given and
    differs from ``n_built``, ``reset_head(n_class)`` re-makes the heads and the label
    names are dropped (the box convention stays: the box regressors keep their weights).

    Args:
        model (Link): the model, built with ``n_built`` classes.
        pretrained_model: a key, a local file or None (random weights).
        n_class (int or None): the count asked for.
        n_built (int): the count the heads were built with.
        entry (Weights or None): from :func:`settle_n_class`; gives the label names.
        reset_head (callable): re-makes the heads for a count.
        source (str or None): the parameter-name mapping of a file (see
            :func:`cvzoo.models.zoo.load_weights`).
    """
    if pretrained_model:
        load = getattr(model, 'load_pretrained', None)
        if load is None:
            zoo.load_weights(model, pretrained_model, source=source)
        else:
            load(pretrained_model, source=source)
    if entry is not None:
        model.label_names = tuple(entry.label_names)
        if entry.box_convention is not None:  # a detector: how its boxes end
            model.box_convention = entry.box_convention
    if n_class is not None and n_class != n_built:
        reset_head(n_class)
        model.label_names = None


def load_pretrained_with_preset(model, pretrained_model, n_class, *, source=None):
    """:func:`load_pretrained` for a model built with :func:`settle_n_class`'s count
    that also takes the entry's preset (classifiers and semantic segmenters).

    The model re-makes its head with ``model.reset_head(n_class)``.
    """
    entry = weights_entry(model, pretrained_model)
    n_built = entry.n_class if entry is not None else n_class
    load_pretrained(model, pretrained_model, n_class, n_built, entry, model.reset_head,
                    source=source)
    if entry is not None:
        model.preset = entry.preset
