"""Bad VOC xml and COCO json: each is refused with the right class, naming the file (and
the object or entry); the folders are the module tests' own (tests/datasets)."""

import json

import pytest

from cvzoo import errors
from cvzoo.datasets import COCOBboxDataset, VOCBboxDataset, voc_bbox_label_names
from tests.helpers import coco_files, voc_folders


def _object(name='dog', box=('1', '2', '10', '12'), difficult='0', bndbox=True):
    coordinates = ''.join(f'<{key}>{value}</{key}>'
                          for key, value in zip(('xmin', 'ymin', 'xmax', 'ymax'), box))
    inner = f'<bndbox>{coordinates}</bndbox>' if bndbox else ''
    return f'<object><name>{name}</name><difficult>{difficult}</difficult>{inner}</object>'


def _xml(*objects, size='<size><width>30</width><height>20</height></size>'):
    return f'<annotation>{size}{"".join(objects)}</annotation>'


_LAUGHS = ''.join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
BILLION_LAUGHS = (f'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY l0 "lol">{_LAUGHS}]>'
                  + _xml(_object(name='&l9;')))
EXTERNAL_ENTITY = ('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                   + _xml(_object(name='&e;')))

# case: (text of Annotations/x.xml, error, what the message names besides x.xml)
VOC_XML = {
    'malformed_xml': ('<annotation><object>', errors.CorruptFileError, 'not valid xml'),
    'empty_file': ('', errors.CorruptFileError, 'not valid xml'),
    'billion_laughs': (BILLION_LAUGHS, errors.CorruptFileError, 'not valid xml'),
    'external_entity': (EXTERNAL_ENTITY, errors.CorruptFileError, 'not valid xml'),
    'missing_bndbox': (_xml(_object(), _object(bndbox=False)), errors.AnnotationError,
                       'bndbox/xmin'),
    'non_numeric_coordinate': (_xml(_object(box=('1', 'two', '10', '12'))),
                               errors.AnnotationError, 'ymin'),
    'empty_coordinate': (_xml(_object(box=('1', '2', '', '12'))), errors.AnnotationError,
                         'xmax'),
    'xmax_below_xmin': (_xml(_object(box=('10', '2', '5', '12'))), errors.AnnotationError,
                        'xmax < xmin'),
    'nan_coordinate': (_xml(_object(box=('nan', '2', '10', '12'))), errors.AnnotationError,
                       'not finite'),
    'overflowing_coordinate': (_xml(_object(box=('1', '2', '1e400', '12'))),
                               errors.AnnotationError, 'not finite'),
    'box_outside_image': (_xml(_object(), _object(box=('40', '2', '50', '12'))),
                          errors.AnnotationError, 'wholly outside'),
    'empty_name': (_xml(_object(name='  ')), errors.AnnotationError, '<name>'),
    'unknown_name': (_xml(_object(name='dgo')), errors.AnnotationError, "'dgo'"),
    'difficult_not_0_or_1': (_xml(_object(difficult='yes')), errors.AnnotationError,
                             '<difficult>'),
    'size_not_a_number': (_xml(_object(), size='<size><width>wide</width><height>20</height>'
                                               '</size>'), errors.AnnotationError, 'width'),
}


@pytest.fixture
def voc_root(tmp_path):
    """A VOC folder with the image x (20x30) listed in trainval, and its xml."""
    return voc_folders.write_voc(tmp_path / 'voc', {'x': [('dog', 0, (1, 2, 10, 12))]})


@pytest.mark.parametrize('case', list(VOC_XML), ids=list(VOC_XML))
def test_bad_voc_xml_names_file_and_field(voc_root, case):
    text, error, named = VOC_XML[case]
    (voc_root / 'Annotations' / 'x.xml').write_text(text)
    with pytest.raises(error) as info:
        VOCBboxDataset(voc_root, label_names=voc_bbox_label_names)[0]
    assert type(info.value) is error
    assert 'x.xml' in str(info.value) and named in str(info.value)


def test_empty_name_is_refused_also_when_names_are_inferred(voc_root):
    (voc_root / 'Annotations' / 'x.xml').write_text(_xml(_object(name='')))
    with pytest.raises(errors.AnnotationError, match=r'x\.xml.*<name>'):
        VOCBboxDataset(voc_root)


def _no_xml(root):
    (root / 'Annotations' / 'x.xml').unlink()


def _no_image(root):
    (root / 'JPEGImages' / 'x.jpg').unlink()


def _listed_twice_one_missing(root):
    (root / 'ImageSets' / 'Main' / 'trainval.txt').write_text('x\ny\n')


# case: (how to break the folder, error, the file the message names)
VOC_FOLDERS = {
    'xml_missing_for_a_listed_id': (_no_xml, FileNotFoundError, 'x.xml'),
    'image_missing_for_a_listed_id': (_no_image, FileNotFoundError, 'x.jpg'),
    'id_in_image_sets_without_files': (_listed_twice_one_missing, FileNotFoundError, 'y.xml'),
}


@pytest.mark.parametrize('case', list(VOC_FOLDERS), ids=list(VOC_FOLDERS))
def test_missing_voc_file_is_named(voc_root, case):
    breaks, error, named = VOC_FOLDERS[case]
    breaks(voc_root)
    dataset = VOCBboxDataset(voc_root, label_names=voc_bbox_label_names)
    with pytest.raises(error) as info:
        [dataset[i] for i in range(len(dataset))]
    assert type(info.value) is error and named in str(info.value)


def test_missing_split_file_is_named(voc_root):
    with pytest.raises(FileNotFoundError, match='test.txt'):
        VOCBboxDataset(voc_root, split='test', label_names=voc_bbox_label_names)


def _set(key, value, where=('annotations', 0)):
    def change(data):
        data[where[0]][where[1]][key] = value
    return change


def _remove(key, where=('annotations', 0)):
    def change(data):
        del data[where[0]][where[1]][key]
    return change


def _append_copy(where):
    def change(data):
        data[where].append(dict(data[where][0]))
    return change


def _raw(content):
    def change(data):
        return content
    return change


# case: (change to the json's data, or the raw bytes it returns; error; what the message names
# besides instances.json). Image 3 (a.png, 12x16) is the one read.
COCO_JSON = {
    'not_json': (_raw(b'{"images": ['), errors.CorruptFileError, 'not valid json'),
    'binary_file': (_raw(b'PK\x03\x04\xff\xfe\x00\x01' * 8), errors.CorruptFileError,
                    'not valid json'),
    'top_level_list': (_raw(b'[]'), errors.AnnotationError, 'top level'),
    'empty_object': (lambda d: d.clear(), errors.AnnotationError,
                                "'images': missing"),
    'image_without_id': (_remove('id', ('images', 1)), errors.AnnotationError, "field 'id'"),
    'image_id_a_float': (_set('id', 3.0, ('images', 1)), errors.AnnotationError, "field 'id'"),
    'category_without_name': (_remove('name', ('categories', 0)), errors.AnnotationError,
                              "field 'name'"),
    'duplicate_image_id': (_append_copy('images'), errors.AnnotationError, 'more than one image'),
    'duplicate_category_id': (_append_copy('categories'), errors.AnnotationError,
                              'more than one category'),
    'unknown_image_id': (_set('image_id', 99), errors.AnnotationError, "'image_id'"),
    'unknown_category_id': (_set('category_id', 99), errors.AnnotationError, "'category_id'"),
    'category_id_a_string': (_set('category_id', '20'), errors.AnnotationError,
                             "'category_id'"),
    'bbox_missing': (_remove('bbox'), errors.AnnotationError, "'bbox'"),
    'bbox_negative_width': (_set('bbox', [2, 1, -6, 4]), errors.AnnotationError, "'bbox'"),
    'bbox_strings': (_set('bbox', ['2', '1', '6', '4']), errors.AnnotationError, "'bbox'"),
    'bbox_nan': (_set('bbox', [2, float('nan'), 6, 4]), errors.AnnotationError, "'bbox'"),
    'bbox_outside_image': (_set('bbox', [40, 1, 6, 4]), errors.AnnotationError,
                           'wholly outside'),
    'image_without_file_name': (_remove('file_name', ('images', 1)), errors.AnnotationError,
                                "'file_name'"),
    'image_file_missing': (_set('file_name', 'gone.png', ('images', 1)), FileNotFoundError,
                           'gone.png'),
}


@pytest.mark.parametrize('case', list(COCO_JSON), ids=list(COCO_JSON))
def test_bad_coco_json_names_file_and_entry(tmp_path, case):
    change, error, named = COCO_JSON[case]
    json_path, img_dir = coco_files.write_coco(tmp_path, [dict(coco_files.ANNOTATIONS[0])])
    data = json.loads(json_path.read_text())
    raw = change(data)
    if raw is None:
        json_path.write_text(json.dumps(data, allow_nan=True))
    else:
        json_path.write_bytes(raw)
    with pytest.raises(error) as info:
        COCOBboxDataset.from_json(json_path, img_dir)[0]
    assert type(info.value) is error
    message = str(info.value)
    assert named in message
    assert 'instances.json' in message or error is FileNotFoundError
