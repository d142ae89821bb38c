"""load_classification_training_splits: what train_classifier.py's --dataset names."""

import numpy
import pytest
from PIL import Image

from cvzoo.datasets import registry


def _class_folders(root, n_per_class):
    for k, name in enumerate(('cat', 'dog')):
        (root / name).mkdir(parents=True)
        for i in range(n_per_class):
            Image.new('RGB', (4, 3), (i, 100 * k, 0)).save(root / name / f'{i}.png')
    return root


def test_a_folder_splits_80_20_at_random_by_seed(tmp_path):
    root = _class_folders(tmp_path / 'train', 5)
    train, held_out, names = registry.load_classification_training_splits(str(root), seed=3)
    assert names == ('cat', 'dog') and (len(train), len(held_out)) == (8, 2)
    labels = sorted([int(train[i][1]) for i in range(8)] + [int(held_out[i][1]) for i in range(2)])
    assert labels == [0] * 5 + [1] * 5
    again = registry.load_classification_training_splits(str(root), seed=3)[1]
    other = registry.load_classification_training_splits(str(root), seed=4)[1]
    first = [held_out[i][0].tobytes() for i in range(2)]
    assert first == [again[i][0].tobytes() for i in range(2)]
    assert first != [other[i][0].tobytes() for i in range(2)]


def test_a_validation_folder_keeps_the_whole_training_folder(tmp_path):
    train_root = _class_folders(tmp_path / 'train', 3)
    val_root = _class_folders(tmp_path / 'val', 2)
    train, val, names = registry.load_classification_training_splits(
        str(train_root), str(val_root))
    assert (len(train), len(val), names) == (6, 4, ('cat', 'dog'))


def test_digits():
    pytest.importorskip('sklearn')
    train, held_out, names = registry.load_classification_training_splits('digits')
    assert (len(train), len(held_out), names) == (1437, 360, tuple('0123456789'))
    img, label = train[0]
    assert img.shape == (3, 8, 8) and img.dtype == numpy.float32 and 0 <= label < 10


@pytest.mark.parametrize('layout', ['empty', 'one_class', 'second_class_empty'])
def test_a_folder_without_two_classes_of_images_is_refused(tmp_path, layout):
    """A classifier trained on one class learns nothing while its accuracy reads 100%."""
    from cvzoo import errors

    root = tmp_path / 'train'
    root.mkdir()
    if layout != 'empty':
        _class_folders(tmp_path / 'both', 2)
        (tmp_path / 'both' / 'cat').rename(root / 'cat')
    if layout == 'second_class_empty':
        (root / 'dog').mkdir()
    with pytest.raises(errors.UsageError, match='at least two') as info:
        registry.load_classification_training_splits(str(root))
    assert str(root) in str(info.value)
