"""A class list: ``classes.txt``, a class name a line, class 0 first."""

import pathlib

from cvzoo import errors

CLASS_LIST = 'classes.txt'


def read_class_list(path):
    """The names of a class list: one a line, blank lines skipped.

    Raises:
        cvzoo.errors.AnnotationError: the list holds no name, or a name twice.
    """
    names = [line.strip() for line in pathlib.Path(path).read_text(
        encoding='utf-8').splitlines() if line.strip()]
    if not names:
        raise errors.AnnotationError(f'{path}: expected a class name a line, found none')
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise errors.AnnotationError(f'{path}: class names {repeated} are listed twice')
    return tuple(names)
