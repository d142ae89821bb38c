"""read_class_list: classes.txt, a name a line."""

import pytest

from cvzoo import errors
from cvzoo.datasets.image_folder.class_list import read_class_list


def test_names_in_order_blank_lines_skipped(tmp_path):
    path = tmp_path / 'classes.txt'
    path.write_text('background\n\n  road \nsky\n')
    assert read_class_list(path) == ('background', 'road', 'sky')


@pytest.mark.parametrize('text, expected', [('\n \n', 'found none'),
                                            ('a\nb\na\n', "\\['a'\\] are listed twice")])
def test_empty_or_repeated_lists_are_refused(text, expected, tmp_path):
    path = tmp_path / 'classes.txt'
    path.write_text(text)
    with pytest.raises(errors.AnnotationError, match=expected) as error:
        read_class_list(path)
    assert str(path) in str(error.value)


def test_segmentation_folder_of_the_registry_takes_its_names(tmp_path):
    """``--dataset PATH`` of the evaluation scripts reads the same classes.txt."""
    from cvzoo.datasets import registry
    from cvzoo.testing import synthetic_data

    root = synthetic_data.write_segmentation_folders(tmp_path / 'data',
                                                     synthetic_data.region_scenes(2, 32))
    data = registry.load_semantic_segmentation_dataset(str(root), ignore_label=255)
    assert data.label_names == synthetic_data.REGION_NAMES
    (root / 'classes.txt').unlink()
    assert registry.load_semantic_segmentation_dataset(str(root)).label_names is None
