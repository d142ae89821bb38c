"""The dataset contract checks pass good examples and name the index and field of bad ones."""

import numpy
import pytest

from cvzoo.testing import (assert_is_bbox_dataset, assert_is_instance_segmentation_dataset,
                           assert_is_label_dataset, assert_is_semantic_segmentation_dataset)

H, W = 4, 6


def _img():
    return numpy.full((3, H, W), 128, numpy.float32)


def _bbox_example():
    bbox = numpy.array([[0, 0, W, H], [1, 1, 1, 2]], numpy.float32)  # a zero-width box is fine
    return _img(), bbox, numpy.array([0, 2], numpy.int32)


def _semantic_example():
    label = numpy.zeros((H, W), numpy.int32)
    label[0, 0], label[1, 1] = -1, 4
    return _img(), label


def _label_example():
    return _img(), numpy.int32(2)


def _instance_example():
    mask = numpy.zeros((2, H, W), bool)
    mask[0, :2, :2] = True
    return _img(), mask, numpy.array([1, 0], numpy.int32)


def _replace(example, index, value):
    return example[:index] + (value,) + example[index + 1:]


def _broken(make, index, value):
    """A dataset whose example 1 has field ``index`` replaced by ``value``."""
    return [make(), _replace(make(), index, value), make()]


def _empty_bbox():
    return (_img(), numpy.zeros((0, 4), numpy.float32), numpy.zeros(0, numpy.int32))


def test_good_datasets_pass():
    assert_is_bbox_dataset([_bbox_example(), _empty_bbox()], n_fg_class=3)
    assert_is_bbox_dataset([_bbox_example() + (numpy.zeros(2, bool),)], n_fg_class=3)
    assert_is_semantic_segmentation_dataset([_semantic_example()] * 2, n_class=5)
    assert_is_label_dataset([_label_example(), (_img(), numpy.array(0, numpy.int32))], 3)
    gray = (numpy.zeros((1, H, W), numpy.float32), numpy.int32(0))
    assert_is_label_dataset([gray], 3, color=False)
    assert_is_instance_segmentation_dataset([_instance_example()], n_fg_class=2)


BBOX_CASES = [
    (0, numpy.zeros((3, H, W), numpy.float64), 'img', 'float32'),
    (0, numpy.zeros((H, W, 3), numpy.float32), 'img', 'channels'),
    (0, numpy.full((3, H, W), 256, numpy.float32), 'img', r'\[0, 255\]'),
    (0, numpy.full((3, H, W), -1, numpy.float32), 'img', r'\[0, 255\]'),
    (1, numpy.array([[0, 0, 2, 2], [3, 1, 2, 2]], numpy.float32), 'bbox', 'x_min > x_max'),
    (1, numpy.array([[0, 3, 2, 2], [0, 0, 2, 2]], numpy.float32), 'bbox', 'y_min > y_max'),
    (1, numpy.array([[0, 0, W + 1, 2], [0, 0, 1, 1]], numpy.float32), 'bbox', 'outside'),
    (1, numpy.array([[0, 0, 2, H + 1], [0, 0, 1, 1]], numpy.float32), 'bbox', 'outside'),
    (1, numpy.array([[-1, 0, 2, 2], [0, 0, 1, 1]], numpy.float32), 'bbox', 'outside'),
    (1, numpy.array([[numpy.nan, 0, 2, 2], [0, 0, 1, 1]], numpy.float32), 'bbox', 'nan'),
    (1, numpy.zeros((2, 4), numpy.float64), 'bbox', 'float32'),
    (1, numpy.zeros((2, 5), numpy.float32), 'bbox', r'\(R, 4\)'),
    (1, [[0, 0, 1, 1], [0, 0, 1, 1]], 'bbox', 'NumPy array'),
    (2, numpy.array([0, 3], numpy.int32), 'label', r'\[0, 3\)'),
    (2, numpy.array([-1, 0], numpy.int32), 'label', r'\[0, 3\)'),
    (2, numpy.array([0, 1], numpy.int64), 'label', 'int32'),
    (2, numpy.array([0], numpy.int32), 'label', 'one per instance'),
]


@pytest.mark.parametrize('index, value, field, match', BBOX_CASES, ids=[
    'img_float64', 'img_hwc', 'img_above_255', 'img_negative', 'bbox_x_inverted',
    'bbox_y_inverted', 'bbox_right_of_image', 'bbox_below_image', 'bbox_negative', 'bbox_nan',
    'bbox_float64', 'bbox_five_columns', 'bbox_list', 'label_too_big', 'label_negative',
    'label_int64', 'label_count'])
def test_bbox_dataset_names_index_and_field(index, value, field, match):
    dataset = _broken(_bbox_example, index, value)
    with pytest.raises(AssertionError, match=f'example 1: {field}: .*{match}'):
        assert_is_bbox_dataset(dataset, n_fg_class=3)


@pytest.mark.parametrize('value, match', [
    (numpy.zeros((H, W), numpy.uint8), 'int32'),
    (numpy.zeros((H, W + 1), numpy.int32), 'image size'),
    (numpy.zeros((1, H, W), numpy.int32), 'axes'),
    (numpy.full((H, W), 5, numpy.int32), r'\[-1, 5\)'),
    (numpy.full((H, W), -2, numpy.int32), r'\[-1, 5\)'),
], ids=['uint8', 'wrong_size', 'three_axes', 'too_big', 'below_ignore'])
def test_semantic_segmentation_dataset_names_index_and_field(value, match):
    dataset = _broken(_semantic_example, 1, value)
    with pytest.raises(AssertionError, match=f'example 1: label: .*{match}'):
        assert_is_semantic_segmentation_dataset(dataset, n_class=5)


@pytest.mark.parametrize('value, match', [
    (2, 'NumPy scalar'),
    (numpy.array([2], numpy.int32), 'NumPy scalar'),
    (numpy.int64(2), 'int32'),
    (numpy.int32(3), r'\[0, 3\)'),
    (numpy.int32(-1), r'\[0, 3\)'),
], ids=['python_int', 'one_element_array', 'int64', 'too_big', 'negative'])
def test_label_dataset_names_index_and_field(value, match):
    dataset = _broken(_label_example, 1, value)
    with pytest.raises(AssertionError, match=f'example 1: label: .*{match}'):
        assert_is_label_dataset(dataset, n_class=3)


def test_label_dataset_color_flag():
    with pytest.raises(AssertionError, match='example 0: img: expected 1 channels'):
        assert_is_label_dataset([_label_example()], n_class=3, color=False)


@pytest.mark.parametrize('index, value, field, match', [
    (1, numpy.zeros((2, H, W), numpy.uint8), 'mask', 'bool'),
    (1, numpy.zeros((2, H + 1, W), bool), 'mask', 'image size'),
    (1, numpy.zeros((H, W), bool), 'mask', 'axes'),
    (2, numpy.array([0, 2], numpy.int32), 'label', r'\[0, 2\)'),
    (2, numpy.array([0, 1, 1], numpy.int32), 'label', 'one per instance'),
], ids=['mask_uint8', 'mask_wrong_size', 'mask_two_axes', 'label_too_big', 'label_count'])
def test_instance_segmentation_dataset_names_index_and_field(index, value, field, match):
    dataset = _broken(_instance_example, index, value)
    with pytest.raises(AssertionError, match=f'example 1: {field}: .*{match}'):
        assert_is_instance_segmentation_dataset(dataset, n_fg_class=2)


def test_short_or_non_tuple_example_is_named():
    with pytest.raises(AssertionError, match='example 0: example: .*at least 3'):
        assert_is_bbox_dataset([_semantic_example()], n_fg_class=3)
    with pytest.raises(AssertionError, match='example 0: example: expected a tuple'):
        assert_is_semantic_segmentation_dataset([list(_semantic_example())], n_class=5)


class _Counting(list):
    """A list that records which indexes were read."""

    def __init__(self, examples):
        super().__init__(examples)
        self.seen = []

    def __getitem__(self, i):
        self.seen.append(i)
        return list.__getitem__(self, i)


def test_n_example_draws_a_random_subset(rng):
    good, bad = _bbox_example(), _replace(_bbox_example(), 2, numpy.array([7, 7], numpy.int32))

    dataset = _Counting([good] * 20)
    assert_is_bbox_dataset(dataset, n_fg_class=3, n_example=5)
    assert len(dataset.seen) == 5 == len(set(dataset.seen))
    with pytest.raises(AssertionError, match='example 3: label'):
        assert_is_bbox_dataset([good] * 3 + [bad], n_fg_class=3, n_example=10)  # all 4 read


@pytest.mark.parametrize('kwargs, error, match', [
    ({'n_fg_class': 0}, ValueError, 'n_fg_class'),
    ({'n_fg_class': 2.0}, TypeError, 'n_fg_class'),
    ({'n_fg_class': 3, 'n_example': 0}, ValueError, 'n_example'),
    ({'n_fg_class': 3, 'n_example': True}, TypeError, 'n_example'),
], ids=['zero_classes', 'float_classes', 'zero_examples', 'bool_examples'])
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        assert_is_bbox_dataset([_bbox_example()], **kwargs)


def test_empty_dataset_is_refused():
    with pytest.raises(AssertionError, match='empty'):
        assert_is_semantic_segmentation_dataset([], n_class=5)
