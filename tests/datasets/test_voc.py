"""VOC datasets on small VOC-layout folders built in tmp_path."""

import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.datasets import (VOCBboxDataset, VOCInstanceSegmentationDataset,
                            VOCSemanticSegmentationDataset, voc_bbox_label_names)
from tests.helpers.voc_folders import write_voc


def test_voc_boxes_labels_difficult(tmp_path):
    root = write_voc(tmp_path, {'000001': [('dog', 0, (1, 2, 10, 12)),
                                           ('cat', 1, (5, 5, 8, 8))],
                                '000002': []})
    dataset = VOCBboxDataset(root, split='trainval', return_difficult=True,
                             use_difficult=True)
    assert dataset.label_names == voc_bbox_label_names
    img, bbox, label, difficult = dataset[0]
    assert img.shape == (3, 20, 30) and img.dtype == numpy.float32
    # NOTE: 1-based inclusive -> x_min - 1, x_max unchanged
    numpy.testing.assert_array_equal(bbox, [[0, 1, 10, 12], [4, 4, 8, 8]])
    assert bbox.dtype == numpy.float32 and label.dtype == numpy.int32
    numpy.testing.assert_array_equal(label, [voc_bbox_label_names.index('dog'),
                                             voc_bbox_label_names.index('cat')])
    numpy.testing.assert_array_equal(difficult, [False, True])
    _, bbox, label = VOCBboxDataset(root)[0]
    assert len(bbox) == 1
    _, bbox, label = VOCBboxDataset(root)[1]
    assert bbox.shape == (0, 4) and label.shape == (0,)


def test_custom_label_names_from_xml_and_clipping(tmp_path):
    root = write_voc(tmp_path, {'a': [('widget', 0, (1, 1, 50, 10))], 'b': [('gear', 0,
                                                                          (2, 2, 4, 4))]})
    dataset = VOCBboxDataset(root, split='trainval')
    assert dataset.label_names == ('gear', 'widget')
    _, bbox, label = dataset[0]
    numpy.testing.assert_array_equal(bbox, [[0, 0, 30, 10]])  # x_max clipped to W = 30
    assert label.tolist() == [1]
    strict = VOCBboxDataset(root, split='trainval', label_names=('widget',))
    with pytest.raises(errors.CorruptFileError, match=r'b\.xml.*name'):
        strict[1]


@pytest.mark.parametrize('xml, match', [
    ('<annotation><object>', 'not valid xml'),
    ('<annotation><object><name>dog</name></object></annotation>',
     r"object 0 \('dog'\) has no <bndbox>"),
    (('<annotation><object><name>dog</name><bndbox><ymin>1</ymin><xmax>2</xmax><ymax>2</ymax>'
      '</bndbox></object></annotation>'), r"object 0 \('dog'\): missing .*<bndbox/xmin>"),
    ('<annotation><object><name>dog</name><bndbox><xmin>a</xmin><ymin>1</ymin><xmax>2</xmax>'
     '<ymax>2</ymax></bndbox></object></annotation>', 'xmin'),
    ('<annotation><object><name>dog</name><bndbox><xmin>5</xmin><ymin>1</ymin><xmax>2</xmax>'
     '<ymax>2</ymax></bndbox></object></annotation>', 'xmax < xmin'),
], ids=['bad_xml', 'missing_box', 'missing_field', 'not_a_number', 'inverted_box'])
def test_malformed_xml_names_file_and_field(tmp_path, xml, match):
    root = write_voc(tmp_path, {'x': []})
    (root / 'Annotations' / 'x.xml').write_text(xml)
    with pytest.raises(errors.CorruptFileError, match=match) as info:
        VOCBboxDataset(root, label_names=voc_bbox_label_names)[0]
    assert 'x.xml' in str(info.value)


BAD_BOXES = {
    'nan': ((float('nan'), 2, 10, 12), 'not finite'),
    'inf': ((1, 2, float('inf'), 12), 'not finite'),
    'right_of_image': ((31, 2, 40, 12), 'wholly outside'),
    'below_image': ((1, 21, 10, 25), 'wholly outside'),
    'left_of_image': ((-9, 2, 0, 12), 'wholly outside'),
}


@pytest.mark.parametrize('with_size', [True, False], ids=['size', 'no_size'])
@pytest.mark.parametrize('case', list(BAD_BOXES))
def test_impossible_box_names_file_and_object(tmp_path, case, with_size):
    box, match = BAD_BOXES[case]
    root = write_voc(tmp_path, {'x': [('dog', 0, (1, 2, 10, 12)), ('cat', 0, box)]})
    if not with_size:
        xml = root / 'Annotations' / 'x.xml'
        xml.write_text(xml.read_text().split('</size>', 1)[1].join(['<annotation>', '']))
    with pytest.raises(errors.AnnotationError, match=match) as info:
        VOCBboxDataset(root, label_names=voc_bbox_label_names)[0]
    message = str(info.value)
    assert 'x.xml' in message and "object 1 ('cat')" in message
    assert isinstance(info.value, ValueError)


def test_inferred_names_warn_about_names_seen_once(tmp_path):
    root = write_voc(tmp_path, {'a': [('widget', 0, (1, 1, 5, 5)), ('widget', 0, (2, 2, 6, 6))],
                                'b': [('widgte', 0, (2, 2, 4, 4)), ('gear', 0, (1, 1, 3, 3))],
                                'c': [('gear', 0, (1, 1, 3, 3))]})
    with pytest.warns(UserWarning, match=r"Annotations.*only once.*\['widgte'\]"):
        dataset = VOCBboxDataset(root)
    assert dataset.label_names == ('gear', 'widget', 'widgte')


def test_missing_image_and_missing_split(tmp_path):
    root = write_voc(tmp_path, {'x': []})
    (root / 'JPEGImages' / 'x.jpg').unlink()
    dataset = VOCBboxDataset(root)  # lazy: constructing reads no image
    with pytest.raises(OSError, match='x.jpg'):
        dataset[0]
    with pytest.raises(FileNotFoundError, match='test.txt'):
        VOCBboxDataset(root, split='test')


def test_auto_without_files_and_without_network_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv('CVZOO_DATASET_ROOT', str(tmp_path))
    with pytest.raises(FileNotFoundError, match='VOC2012'):
        VOCBboxDataset(split='test', year='2012')


def _write_segmentation(root):
    for folder in ('JPEGImages', 'SegmentationClass', 'SegmentationObject',
                   'ImageSets/Segmentation'):
        (root / folder).mkdir(parents=True, exist_ok=True)
    Image.fromarray(numpy.zeros((6, 8, 3), numpy.uint8)).save(root / 'JPEGImages' / 's.jpg')
    cls = numpy.zeros((6, 8), numpy.uint8)
    obj = numpy.zeros((6, 8), numpy.uint8)
    cls[1:3, 1:3], obj[1:3, 1:3] = 12, 1  # a dog (class 12 -> label 11)
    cls[3:5, 4:7], obj[3:5, 4:7] = 15, 2  # a person
    cls[0, :], obj[0, :] = 255, 255
    for name, array in (('SegmentationClass', cls), ('SegmentationObject', obj)):
        Image.fromarray(array, mode='L').convert('P').save(root / name / 's.png')
    (root / 'ImageSets' / 'Segmentation' / 'train.txt').write_text('s\n')
    return cls


def test_semantic_and_instance_segmentation(tmp_path):
    cls = _write_segmentation(tmp_path)
    img, label = VOCSemanticSegmentationDataset(tmp_path, split='train')[0]
    expected = cls.astype(numpy.int32)
    expected[expected == 255] = -1
    numpy.testing.assert_array_equal(label, expected)
    assert label.dtype == numpy.int32
    img, mask, label = VOCInstanceSegmentationDataset(tmp_path, split='train')[0]
    assert mask.shape == (2, 6, 8) and mask.dtype == bool
    assert label.tolist() == [11, 14]
    assert mask[0].sum() == 4 and mask[1].sum() == 6
