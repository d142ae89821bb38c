"""Bad VOC xml and COCO json: each is refused with the right class, naming the file (and
the object or entry); the folders are the module tests' own (tests/datasets)."""

import json

import pytest

from cvzoo import errors
from cvzoo.datasets import (COCOBboxDataset, COCOInstanceSegmentationDataset,
                            VOCBboxDataset, voc_bbox_label_names)
from tests.helpers import coco_files, voc_folders


def _object(name='dog', box=('1', '2', '10', '12'), difficult='0', bndbox=True):
    coordinates = ''.join(f'<{key}>{value}</{key}>'
                          for key, value in zip(('xmin', 'ymin', 'xmax', 'ymax'), box))
    inner = f'<bndbox>{coordinates}</bndbox>' if bndbox else ''
    return f'<object><name>{name}</name><difficult>{difficult}</difficult>{inner}</object>'


def _size(width, height):
    return f'<size><width>{width}</width><height>{height}</height></size>'


def _xml(*objects, size=_size(30, 20)):
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
                       "object 1 ('dog') has no <bndbox>"),
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
    'size_not_the_image': (_xml(_object(), size=_size(40, 20)), errors.AnnotationError,
                           'as 40x20, but'),
    'size_nan': (_xml(_object(), size=_size('nan', 20)), errors.AnnotationError, 'width'),
    'size_fractional': (_xml(_object(), size=_size(30, 19.5)), errors.AnnotationError,
                        'height'),
    'size_one_side_zero': (_xml(_object(), size=_size(0, 20)), errors.AnnotationError,
                           'both sides must be positive'),
    'missing_name': (_xml(_object().replace('<name>dog</name>', '')), errors.AnnotationError,
                     '<name>'),
    'difficult_2': (_xml(_object(difficult='2')), errors.AnnotationError, '<difficult>'),
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


def test_size_of_an_exif_turned_photo_is_refused_with_both_sizes(voc_root):
    from PIL import Image

    # stored as 20 wide, 30 high; Orientation 6 turns it to 30 wide, 20 high when read
    photo = Image.new('RGB', (20, 30))
    exif = photo.getexif()
    exif[0x0112] = 6
    photo.save(voc_root / 'JPEGImages' / 'x.jpg', exif=exif)
    (voc_root / 'Annotations' / 'x.xml').write_text(_xml(_object(), size=_size(20, 30)))
    with pytest.raises(errors.AnnotationError, match=r'x\.xml: <size>: gives the image as '
                                                     r'20x30, but .*x\.jpg reads as 30x20 '
                                                     r'\(turned by its EXIF'):
        VOCBboxDataset(voc_root, label_names=voc_bbox_label_names)[0]


def test_size_of_0x0_means_unknown(voc_root):
    (voc_root / 'Annotations' / 'x.xml').write_text(_xml(_object(), size=_size(0, 0)))
    _, bbox, _ = VOCBboxDataset(voc_root, label_names=voc_bbox_label_names)[0]
    assert bbox.tolist() == [[0, 1, 10, 12]]


def _no_xml(root):
    (root / 'Annotations' / 'x.xml').unlink()


def _no_image(root):
    (root / 'JPEGImages' / 'x.jpg').unlink()


def _listed_twice_one_missing(root):
    (root / 'ImageSets' / 'Main' / 'trainval.txt').write_text('x\ny\n')


# case: (how to break the folder, error, the file the message names)
VOC_FOLDERS = {
    'xml_missing_for_a_listed_id': (_no_xml, errors.MissingFileError, 'x.xml'),
    'image_missing_for_a_listed_id': (_no_image, errors.MissingFileError, 'x.jpg'),
    'id_in_image_sets_without_files': (_listed_twice_one_missing, errors.MissingFileError,
                                       'y.xml'),
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
    'image_without_id': (_remove('id', ('images', 1)), errors.AnnotationError,
                         "images[1]: 'id' is missing"),
    'image_id_a_float': (_set('id', 3.0, ('images', 1)), errors.AnnotationError,
                         "images[1] (id 3.0): 'id' must be an int, got float 3.0"),
    'category_without_name': (_remove('name', ('categories', 0)), errors.AnnotationError,
                              "categories[0] (id 20): 'name' is missing"),
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
    'image_file_missing': (_set('file_name', 'gone.png', ('images', 1)),
                           errors.MissingFileError, 'gone.png'),
    'image_id_a_list': (_set('image_id', [3]), errors.AnnotationError,
                        "annotations[0] (id 1): 'image_id' must be an int, got list [3]"),
    'category_id_a_list': (_set('category_id', [20]), errors.AnnotationError,
                           "annotations[0] (id 1): 'category_id' must be an int, got list"),
    'width_a_string': (_set('width', '16', ('images', 1)), errors.AnnotationError,
                       "images[1] (id 3): 'width' must be a positive int, got str '16'"),
    'height_a_string': (_set('height', '12', ('images', 1)), errors.AnnotationError,
                        "images[1] (id 3): 'height' must be a positive int"),
    'width_zero': (_set('width', 0, ('images', 0)), errors.AnnotationError,
                   "images[0] (id 7): 'width' must be a positive int, got int 0"),
    'size_not_the_image': (_set('width', 17, ('images', 1)), errors.AnnotationError,
                           'images[1] (id 3): gives the image as 17x12, but'),
    'area_a_string': (_set('area', '24'), errors.AnnotationError,
                      "annotations[0] (id 1): 'area' must be a finite number >= 0, got str"),
    'area_nan': (_set('area', float('nan')), errors.AnnotationError, "'area' must be a finite"),
    'file_name_an_int': (_set('file_name', 3, ('images', 1)), errors.AnnotationError,
                         "images[1] (id 3): 'file_name' must be a file name"),
    'file_name_with_nul': (_set('file_name', 'a.png\0', ('images', 1)), errors.AnnotationError,
                           "'file_name' must be a file name"),
    'iscrowd_a_string': (_set('iscrowd', '0'), errors.AnnotationError,
                         "annotations[0] (id 1): 'iscrowd' must be 0 or 1, got str '0'"),
    'iscrowd_2': (_set('iscrowd', 2), errors.AnnotationError, "'iscrowd' must be 0 or 1"),
    'category_name_an_int': (_set('name', 5, ('categories', 0)), errors.AnnotationError,
                             "categories[0] (id 20): 'name' must be a non-empty string"),
    'bbox_of_400_digits': (_set('bbox', [2, 1, 10 ** 400, 4]), errors.AnnotationError,
                           "'bbox' must be [x, y, w, h]"),
    'nested_100000_deep': (_raw(b'{"images": ' + b'[' * 100000 + b']' * 100000 + b'}'),
                           errors.AnnotationError, 'nested deeper than Python can parse'),
    'int_of_5000_digits': (_raw(b'{"images": [' + b'7' * 5000 + b']}'), errors.CorruptFileError,
                           'not valid json'),
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
    assert 'instances.json' in message or error is errors.MissingFileError


def test_utf8_bom_json_reads(tmp_path):
    json_path, img_dir = coco_files.write_coco(tmp_path, [dict(coco_files.ANNOTATIONS[0])])
    json_path.write_bytes(b'\xef\xbb\xbf' + json_path.read_bytes())
    assert COCOBboxDataset.from_json(json_path, img_dir)[0][1].tolist() == [[2, 1, 8, 5]]


H, W = coco_files.H, coco_files.W
NAN, INF = float('nan'), float('inf')
# case: (the annotation's segmentation, what the message names besides
# "instances.json: annotations[0] (id 1): 'segmentation': "); the image is 12x16
SEGMENTATIONS = {
    'rle_declares_60000x60000': ({'size': [60000, 60000], 'counts': [60000 * 60000]},
                                 "'size' must be the image's [height, width] = [12, 16]"),
    'rle_of_another_size': ({'size': [16, 12], 'counts': [H * W]}, "'size' must be"),
    'rle_size_of_strings': ({'size': ['12', '16'], 'counts': [H * W]}, "'size' must be"),
    'rle_without_counts': ({'size': [H, W]}, "'counts' is missing"),
    'rle_counts_short': ({'size': [H, W], 'counts': [3, 4]}, 'must sum to H * W = 192'),
    'rle_counts_negative': ({'size': [H, W], 'counts': [-8, 200]}, 'between 0 and'),
    'rle_counts_sum_wraps_int64': ({'size': [H, W], 'counts': [2 ** 63 - 1, 2 ** 63 - 1, 194]},
                                   'between 0 and H * W'),
    'rle_count_of_400_digits': ({'size': [H, W], 'counts': [10 ** 400]}, '64 bits'),
    'rle_counts_a_dict': ({'size': [H, W], 'counts': {'0': 192}}, "'counts': expected"),
    'rle_counts_of_floats': ({'size': [H, W], 'counts': [100.5, 91.5]}, "'counts': expected"),
    'rle_string_bad_character': ({'size': [H, W], 'counts': '0!0'}, "character b'!' at 1"),
    'rle_string_not_ascii': ({'size': [H, W], 'counts': 'é'}, 'not ASCII'),
    'rle_string_ends_inside_a_count': ({'size': [H, W], 'counts': 'P'}, 'ends inside'),
    'rle_string_endless_count': ({'size': [H, W], 'counts': 'o' * 200000 + '0'},
                                 'more than 13 groups'),
    'polygon_nan_vertex': ([[2, 1, 8, NAN, 8, 5, 2, 5]], 'polygon 0: a coordinate is not'),
    'polygon_inf_vertex': ([[2, 1, INF, 1, 8, 5, 2, 5]], 'polygon 0: a coordinate is not'),
    'polygon_odd_coordinates': ([[2, 1, 8, 1, 8, 5, 2]], 'polygon 0: 7 coordinates, an odd'),
    'polygon_of_strings': ([['2', '1', '8', '1', '8', '5']], 'polygon 0: expected a list of'),
    'polygon_of_points': ([[[2, 1], [8, 1], [8, 5]]], 'polygon 0: expected a list of numbers'),
    'polygon_with_a_bool': ([[2, 1, 8, 1, True, 5]], 'polygon 0: expected a list of numbers'),
    'second_polygon_a_number': ([[2, 1, 8, 1, 8, 5], 4], 'polygon 1: expected a list'),
    'segmentation_a_string': ('2 1 8 1 8 5', 'expected a list of polygons or an RLE object'),
    'segmentation_an_int': (5, 'expected a list of polygons or an RLE object'),
    'segmentation_null': (None, 'expected a list of polygons or an RLE object'),
}


def _instance_json(tmp_path, segmentation):
    json_path, img_dir = coco_files.write_coco(
        tmp_path, [dict(coco_files.ANNOTATIONS[0], segmentation=segmentation)])
    data = json.loads(json_path.read_text())
    json_path.write_text(json.dumps(data, allow_nan=True))
    return json_path, img_dir


@pytest.mark.parametrize('case', list(SEGMENTATIONS), ids=list(SEGMENTATIONS))
def test_bad_segmentation_names_file_and_entry(tmp_path, case):
    import tracemalloc

    segmentation, named = SEGMENTATIONS[case]
    json_path, img_dir = _instance_json(tmp_path, segmentation)
    dataset = COCOInstanceSegmentationDataset.from_json(json_path, img_dir)
    tracemalloc.start()
    try:
        with pytest.raises(errors.AnnotationError) as info:
            dataset[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert type(info.value) is errors.AnnotationError
    message = str(info.value)
    assert "instances.json: annotations[0] (id 1): 'segmentation': " in message
    assert named in message
    assert peak < 50 * 2 ** 20  # decided from sizes, before the mask is made


def test_missing_segmentation_names_the_entry(tmp_path):
    json_path, img_dir = _instance_json(tmp_path, None)
    data = json.loads(json_path.read_text())
    del data['annotations'][0]['segmentation']
    json_path.write_text(json.dumps(data))
    with pytest.raises(errors.AnnotationError, match=r"annotations\[0\] \(id 1\): "
                                                     r"'segmentation' is missing"):
        COCOInstanceSegmentationDataset.from_json(json_path, img_dir)[0]


def test_polygon_of_two_points_adds_nothing(tmp_path):
    json_path, img_dir = _instance_json(tmp_path, [[2, 1, 8, 5], [2, 1, 8, 1, 8, 5, 2, 5]])
    mask = COCOInstanceSegmentationDataset.from_json(json_path, img_dir)[0][1]
    assert mask.sum() == 6 * 4  # the rectangle only


def test_polygon_crossing_too_many_rows_is_refused(tmp_path, monkeypatch):
    from cvzoo.datasets.coco import coco_mask_decoding

    monkeypatch.setattr(coco_mask_decoding, 'MAX_POLYGON_CROSSINGS', 100)
    zigzag = [value for k in range(10) for value in (k, 0, k + 0.5, 12)]  # 20 edges x 12 rows
    json_path, img_dir = _instance_json(tmp_path, [zigzag])
    with pytest.raises(errors.AnnotationError, match=r"'segmentation': its polygons cross "
                                                     r'pixel rows 2\d\d times, more than the '
                                                     r'100'):
        COCOInstanceSegmentationDataset.from_json(json_path, img_dir)[0]


def test_too_many_masks_for_one_image_are_refused_before_allocating(tmp_path, monkeypatch):
    from cvzoo.datasets.coco import coco_instance_segmentation_dataset as module

    monkeypatch.setattr(module, 'MAX_MASK_PIXELS', 2 * H * W)
    json_path, img_dir = coco_files.write_coco(tmp_path, [dict(a) for a in
                                                          coco_files.ANNOTATIONS[:1] * 3])
    with pytest.raises(errors.AnnotationError, match=r'images\[1\] \(id 3\): 3 masks of '
                                                     r'16x12 pixels are more than the 384'):
        module.COCOInstanceSegmentationDataset.from_json(json_path, img_dir)[0]


PERSON = coco_files.PERSON
# case: (change to the first person's annotation or category, what the message names)
KEYPOINTS = {
    'too_short': (_set('keypoints', [4, 2, 2] * 2), "annotations[0] (id 11): 'keypoints' must "
                                                    "be 9 finite numbers"),
    'strings': (_set('keypoints', ['4', '2', '2'] * 3), "'keypoints' must be 9 finite"),
    'a_bool': (_set('keypoints', [4, 2, True] * 3), "'keypoints' must be 9 finite"),
    'a_number': (_set('keypoints', 9), "'keypoints' must be 9 finite numbers"),
    'v_of_3': (_set('keypoints', [4, 2, 3] * 3), "'keypoints' must have a v of 0"),
    'v_negative': (_set('keypoints', [4, 2, -1] * 3), "'keypoints' must have a v of 0"),
    'names_a_string': (_set('keypoints', 'nose', ('categories', 0)),
                       "category 1: 'keypoints' must be a list of point names, got str"),
    'names_of_ints': (_set('keypoints', [1, 2, 3], ('categories', 0)),
                      "category 1: 'keypoints' must be a list of point names"),
}


@pytest.mark.parametrize('case', list(KEYPOINTS), ids=list(KEYPOINTS))
def test_bad_keypoints_name_file_and_entry(tmp_path, case):
    from cvzoo.datasets import COCOKeypointDataset

    change, named = KEYPOINTS[case]
    json_path, img_dir = coco_files.write_coco_keypoints(
        tmp_path, [dict(a) for a in coco_files.KEYPOINT_ANNOTATIONS], [dict(PERSON)])
    data = json.loads(json_path.read_text())
    change(data)
    json_path.write_text(json.dumps(data))
    with pytest.raises(errors.AnnotationError) as info:
        COCOKeypointDataset.from_json(json_path, img_dir)[0]
    assert type(info.value) is errors.AnnotationError
    assert 'person_keypoints.json: ' in str(info.value) and named in str(info.value)


def _yolo_line(root, line):
    path = root / 'labels' / 'train' / '000001.txt'
    path.write_text(path.read_text() + line + '\n')
    return path


def _yolo_yaml(root, text):
    (root / 'data.yaml').write_text(text)
    return root / 'data.yaml'


def _label_value(root, value):
    import numpy
    from PIL import Image

    path = root / 'labels' / '000000.png'
    Image.fromarray(numpy.full((32, 32), value, numpy.uint8)).save(path)
    return path


def _classes(root, text):
    (root / 'classes.txt').write_text(text)
    return root / 'classes.txt'


# case: (format written, change to the folder -> the file it broke, error, what is named)
TRAINING_DATA = {
    'yolo_class_out_of_range': ('yolo', lambda root: _yolo_line(root, '3 0.5 0.5 0.1 0.1'),
                                errors.AnnotationError, 'class 3 is not one of the 3 names'),
    'yolo_pixel_coordinates': ('yolo', lambda root: _yolo_line(root, '0 16 16 8 8'),
                               errors.AnnotationError, 'normalised to [0, 1]'),
    'yolo_four_fields': ('yolo', lambda root: _yolo_line(root, '0 0.5 0.5 0.1'),
                         errors.AnnotationError, 'expected 5 fields'),
    'yolo_yaml_without_names': ('yolo', lambda root: _yolo_yaml(root, 'train: images/train\n'),
                                errors.AnnotationError, "'names' is missing"),
    'yolo_yaml_not_yaml': ('yolo', lambda root: _yolo_yaml(root, 'names: [a\n'),
                           errors.CorruptFileError, 'not valid YAML'),
    'label_map_value_not_a_class': ('segmentation_folders', lambda root: _label_value(root, 7),
                                    errors.AnnotationError, 'label value 7 is not a class id'),
    'class_list_repeats_a_name': ('segmentation_folders',
                                  lambda root: _classes(root, 'a\nb\na\n'),
                                  errors.AnnotationError, 'listed twice'),
}


@pytest.mark.parametrize('case', list(TRAINING_DATA), ids=list(TRAINING_DATA))
def test_bad_training_data_names_file_and_line(tmp_path, case):
    """The user's data for ``cvzoo train --data``: each fault is refused with its class,
    naming the file it is in, when the data is read (before any training)."""
    from cvzoo.datasets.formats import load_training_data
    from cvzoo.testing import synthetic_data

    format, change, error, named = TRAINING_DATA[case]
    root = synthetic_data.make_dataset(format, tmp_path / 'data', 3, 0, 32)
    broken = change(root)
    with pytest.raises(error) as info:
        data = load_training_data(root, val_fraction=0)
        [data.train[k] for k in range(len(data.train))]
    assert str(broken) in str(info.value) and named in str(info.value)
