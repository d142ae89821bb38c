"""cvzoo.cli.argument_types: what each argparse type takes and what it refuses."""

import argparse

import pytest

from cvzoo.cli import argument_types

# case: (type, text, the value it gives)
ACCEPTED = {
    'positive_int': (argument_types.positive_int, '3', 3),
    'non_negative_int_zero': (argument_types.non_negative_int, '0', 0),
    'int_at_least': (argument_types.int_at_least(16), '16', 16),
    'positive_float': (argument_types.positive_float, '1e-4', 1e-4),
    'unit_interval_ends': (argument_types.unit_interval, '1', 1.0),
    'half_open': (argument_types.finite_float(0, 1, high_open=True), '0', 0.0),
    'no_bounds': (argument_types.finite_float(), '-7.5', -7.5),
}
# case: (type, text, the texts the message holds)
REFUSED = {
    'positive_int_zero': (argument_types.positive_int, '0', ['>= 1', "'0'"]),
    'positive_int_float': (argument_types.positive_int, '2.5', ['whole number', "'2.5'"]),
    'non_negative_int': (argument_types.non_negative_int, '-1', ['>= 0', "'-1'"]),
    'int_at_least': (argument_types.int_at_least(16), '4', ['>= 16', "'4'"]),
    'positive_float_zero': (argument_types.positive_float, '0', ['> 0', "'0'"]),
    'positive_float_nan': (argument_types.positive_float, 'nan', ['finite', "'nan'"]),
    'positive_float_overflow': (argument_types.positive_float, '1e400', ["'1e400'"]),
    'unit_interval_above': (argument_types.unit_interval, '1.5', ['[0, 1]', "'1.5'"]),
    'unit_interval_inf': (argument_types.unit_interval, '-inf', ['[0, 1]']),
    'half_open_end': (argument_types.finite_float(0, 1, high_open=True), '1', ['[0, 1)']),
    'no_bounds_inf': (argument_types.finite_float(), 'inf', ['expected a finite number, got']),
    'not_a_number': (argument_types.unit_interval, 'high', ["'high'"]),
}


@pytest.mark.parametrize('case', list(ACCEPTED))
def test_accepted(case):
    parse, text, value = ACCEPTED[case]
    assert parse(text) == value


@pytest.mark.parametrize('case', list(REFUSED))
def test_refused_with_what_was_expected_and_what_came(case):
    parse, text, texts = REFUSED[case]
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    for part in texts:
        assert part in str(info.value)


def test_output_paths(tmp_path):
    (tmp_path / 'file').write_bytes(b'')
    (tmp_path / 'folder').mkdir()
    assert argument_types.output_file(str(tmp_path / 'new.png')) == str(tmp_path / 'new.png')
    assert argument_types.output_folder(str(tmp_path / 'new')) == str(tmp_path / 'new')
    assert argument_types.output_path(f'{tmp_path}/new/') == f'{tmp_path}/new/'
    refused = {
        (argument_types.output_file, 'missing/x.png'): 'does not exist',
        (argument_types.output_file, 'file/x.png'): 'is a file, not a folder',
        (argument_types.output_file, 'folder'): 'expected a file name',
        (argument_types.output_file, 'new/'): 'expected a file name',
        (argument_types.output_folder, 'file'): 'expected a folder',
        (argument_types.output_folder, 'missing/deeper'): 'does not exist',
    }
    for (parse, name), text in refused.items():
        with pytest.raises(argparse.ArgumentTypeError, match=text):
            parse(str(tmp_path / name) + ('/' if name.endswith('/') else ''))
    with pytest.raises(argparse.ArgumentTypeError, match='empty'):
        argument_types.output_path('')
    assert not (tmp_path / 'missing').exists() and not (tmp_path / 'new').exists()


def test_existing_file(tmp_path):
    (tmp_path / 'a.cfg').write_text('')
    assert argument_types.existing_file(str(tmp_path / 'a.cfg')) == str(tmp_path / 'a.cfg')
    with pytest.raises(argparse.ArgumentTypeError, match='no such file'):
        argument_types.existing_file(str(tmp_path / 'b.cfg'))
    with pytest.raises(argparse.ArgumentTypeError, match='the folder'):
        argument_types.existing_file(str(tmp_path))
