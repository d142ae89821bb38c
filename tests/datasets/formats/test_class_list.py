"""read_class_list: classes.txt, a name a line."""

import pytest

from cvzoo import errors
from cvzoo.datasets.formats.class_list import read_class_list


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
