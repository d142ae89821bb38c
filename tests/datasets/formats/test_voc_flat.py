"""VOC xml files beside their images (LabelImg's, CVAT's and Roboflow's exports): recognised
as 'voc', read back as written, the image found by <filename> or stem, classes from a class
list or the files, and each mistake named by its xml file (and object)."""

import shutil

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets.formats import detect_format, load_training_data
from cvzoo.testing import synthetic_data

SIZE = 32
OBJECT = ('<object><name>{name}</name><bndbox><xmin>2</xmin><ymin>3</ymin><xmax>12</xmax>'
          '<ymax>14</ymax></bndbox></object>')


def _flat(root, n_train=4, n_val=0, seed=3):
    return synthetic_data.make_dataset('voc', root, n_train, n_val, SIZE, seed=seed,
                                       layout='flat')


def _check_boxes(dataset, scenes, label_names=synthetic_data.SHAPE_NAMES):
    assert len(dataset) == len(scenes)
    for k, scene in enumerate(scenes):
        img, bbox, label = dataset[k]
        assert img.shape == (3, SIZE, SIZE) and bbox.dtype == numpy.float32
        numpy.testing.assert_allclose(bbox, scene.bbox)
        assert [label_names[i] for i in label] == [
            synthetic_data.SHAPE_NAMES[i] for i in scene.label]


@pytest.mark.filterwarnings('ignore:.*occur only once')
def test_roboflow_train_and_valid_read_back_as_written(tmp_path):
    root = _flat(tmp_path / 'data', 5, 2)
    assert {p.name for p in root.iterdir()} == {'train', 'valid'}
    assert detect_format(root) == 'voc'
    data = load_training_data(root)
    assert (data.format, data.task) == ('voc', 'detection')
    assert data.label_names == synthetic_data.SHAPE_NAMES
    scenes = synthetic_data.examples_for('voc', 7, SIZE, seed=3)
    _check_boxes(data.train, scenes[:5])
    _check_boxes(data.val, scenes[5:])


@pytest.mark.filterwarnings('ignore:.*occur only once')
def test_one_folder_holds_a_seeded_fraction_out(tmp_path):
    root = _flat(tmp_path / 'data', 10)
    assert sorted({p.suffix for p in root.iterdir()}) == ['.jpg', '.xml']
    assert detect_format(root) == 'voc'
    data = load_training_data(root, val_fraction=0.3, seed=1)
    assert (len(data.train), len(data.val)) == (7, 3)


def test_a_test_folder_validates_when_there_is_no_valid_folder(tmp_path):
    root = _flat(tmp_path / 'data', 3, 2)
    (root / 'valid').rename(root / 'test')
    assert detect_format(root) == 'voc'
    assert [len(s) for s in (load_training_data(root).train, load_training_data(root).val)] \
        == [3, 2]


def _labelimg(root, files):
    """Write a folder of grey images and xml files: {xml stem: (filename or None, image
    file or None, [class names])}."""
    from PIL import Image

    root.mkdir(parents=True)
    for stem, (filename, image, names) in files.items():
        if image is not None:
            Image.new('RGB', (SIZE, SIZE), (90, 90, 90)).save(root / image)
        told = '' if filename is None else f'<filename>{filename}</filename>'
        objects = ''.join(OBJECT.format(name=name) for name in names)
        (root / f'{stem}.xml').write_text(f'<annotation>{told}{objects}</annotation>')
    return root


def test_the_image_is_the_xml_s_filename_else_its_stem(tmp_path):
    root = _labelimg(tmp_path / 'labelimg', {
        'a': ('photo.png', 'photo.png', ['dog']),          # named, another stem
        'b': (None, 'b.jpeg', ['cat']),                    # no <filename>: the stem's image
        'c': ('C:\\Users\\me\\Pictures\\c.jpg', 'c.jpg', ['dog', 'cat']),  # a Windows path
        'd': ('renamed.jpg', 'd.png', ['cat'])})           # named but gone: the stem's
    data = load_training_data(root, val_fraction=0)
    assert data.label_names == ('cat', 'dog')
    assert [p.name for p in data.train.img_paths] == ['photo.png', 'b.jpeg', 'c.jpg', 'd.png']
    assert [data.train[k][2].tolist() for k in range(4)] == [[1], [0], [1, 0], [0]]
    numpy.testing.assert_array_equal(data.train[0][1], [[1, 2, 12, 14]])


@pytest.mark.parametrize('list_name', ['classes.txt', 'labels.txt'])
def test_a_class_list_gives_the_classes_and_their_order(list_name, tmp_path):
    root = _labelimg(tmp_path / 'data', {'a': ('a.jpg', 'a.jpg', ['dog']),
                                         'b': ('b.jpg', 'b.jpg', ['cat'])})
    (root / list_name).write_text('dog\nbird\ncat\n')
    data = load_training_data(root, val_fraction=0)
    assert data.label_names == ('dog', 'bird', 'cat')
    assert [data.train[k][2].tolist() for k in range(2)] == [[0], [2]]


def test_a_class_outside_the_class_list_names_the_xml(tmp_path):
    root = _labelimg(tmp_path / 'data', {'a': ('a.jpg', 'a.jpg', ['dog']),
                                         'b': ('b.jpg', 'b.jpg', ['cat'])})
    (root / 'classes.txt').write_text('dog\n')
    with pytest.raises(errors.AnnotationError, match=r"b\.xml: class 'cat' is not in .*"
                                                     r"classes\.txt \['dog'\]"):
        load_training_data(root)


def test_a_missing_image_names_the_xml_and_the_filename(tmp_path):
    root = _labelimg(tmp_path / 'data', {'a': ('a.jpg', 'a.jpg', ['dog']),
                                         'b': ('photo.jpg', None, ['dog'])})
    with pytest.raises(errors.MissingFileError) as error:
        load_training_data(root)
    message = str(error.value)
    assert str(root / 'b.xml') in message and "<filename> 'photo.jpg'" in message
    assert 'b.*' in message


@pytest.mark.parametrize('object_xml, error, match', [
    ('<object><name>dog</name></object>', errors.AnnotationError,
     r"b\.xml: object 1 \('dog'\) has no <bndbox>"),
    (('<object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax></bndbox>'
      '</object>'), errors.AnnotationError,
     r"b\.xml: object 1 \('dog'\): missing .*<bndbox/ymax>"),
    ('<object><bndbox/></object>', errors.AnnotationError, r'b\.xml: object 1: .*<name>'),
    ('<object>', errors.CorruptFileError, r'b\.xml: not valid xml'),
], ids=['no_bndbox', 'no_ymax', 'no_name', 'broken'])
def test_a_bad_object_names_the_xml_and_the_object(object_xml, error, match, tmp_path):
    root = _labelimg(tmp_path / 'data', {'a': ('a.jpg', 'a.jpg', ['dog']),
                                         'b': ('b.jpg', 'b.jpg', ['cat'])})
    (root / 'b.xml').write_text(f'<annotation><filename>b.jpg</filename>'
                                f'{OBJECT.format(name="cat")}{object_xml}</annotation>')
    with pytest.raises(error, match=match):
        load_training_data(root)  # when read, before any training


def test_xml_files_that_are_not_voc_are_not_taken_for_it(tmp_path):
    """CVAT's own export: one annotations.xml (root <annotations>) beside the images."""
    root = _labelimg(tmp_path / 'cvat', {'a': ('a.jpg', 'a.jpg', ['dog'])})
    (root / 'a.xml').rename(root / 'annotations.xml')
    (root / 'annotations.xml').write_text('<annotations><image name="a.jpg"/></annotations>')
    with pytest.raises(errors.UsageError, match='cannot tell the format'):
        detect_format(root)


def test_xml_files_without_images_are_not_taken_for_voc(tmp_path):
    root = _labelimg(tmp_path / 'data', {'a': ('a.jpg', None, ['dog'])})
    with pytest.raises(errors.UsageError, match='cannot tell the format'):
        detect_format(root)


@pytest.mark.filterwarnings('ignore:.*occur only once')
def test_a_flat_export_validates_a_voc_folder_and_back(tmp_path):
    devkit = synthetic_data.make_dataset('voc', tmp_path / 'devkit', 4, 0, SIZE, seed=1)
    flat = _flat(tmp_path / 'flat', 3, 0, seed=2)
    data = load_training_data(devkit, val=flat)
    assert (len(data.train), len(data.val)) == (4, 3)
    _check_boxes(data.val, synthetic_data.examples_for('voc', 3, SIZE, seed=2),
                 data.label_names)
    data = load_training_data(flat, val=devkit, val_fraction=0)
    assert (len(data.train), len(data.val)) == (3, 4)


def test_the_devkit_layout_is_still_read_as_voc_s(tmp_path):
    """A folder with Annotations/ and ImageSets/ is VOC's layout even with xml files beside
    images elsewhere in it."""
    root = synthetic_data.make_dataset('voc', tmp_path / 'data', 3, 1, SIZE)
    shutil.copy(root / 'JPEGImages' / '000000.jpg', root / 'stray.jpg')
    shutil.copy(root / 'Annotations' / '000000.xml', root / 'stray.xml')
    data = load_training_data(root)
    assert (len(data.train), len(data.val)) == (3, 1)
