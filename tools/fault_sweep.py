"""Feed cvzoo bad input the way users do, and count how each case ends.

    python tools/fault_sweep.py [--only CLASS] [--case NAME] [--verbose]

Each case makes its files in a fresh folder, runs one command (the ``cvzoo`` CLI, a
script, or a few lines of Python through the public API) in a subprocess with a memory
limit and a timeout, and is classed by what came back:

    error      exit status != 0 and stderr's last line names the problem; no traceback
    answer     exit status 0 (expected for the cases marked so)
    SILENT     exit status 0 where an error was due: a wrong answer given quietly
    TRACEBACK  a Python traceback reached the user
    HANG       the timeout (30 s) ran out
    EXHAUSTED  the memory limit (4 GiB) was hit

It prints one line a case and a table of counts per class. It never fails: the fault
tests in tests/faults/ are what hold each case down; this is the sweep that finds new
ones. Run from the repository root (it imports tests.helpers for its file writers).
"""

import argparse
import json
import os
import pathlib
import resource
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import pth_writer  # noqa: E402 - after the path is set

TIMEOUT_S = 30
MEMORY_LIMIT = 4 << 30

# Python run by the 'api' cases: the snippet, with a cvzoo error (the classes of
# cvzoo.errors, which every entry point prints as one line) turned into one line as the
# command line does; anything else, a bare ValueError included, is left as a traceback.
API_PRELUDE = '''
import sys
from cvzoo import errors
def _run():
{body}
try:
    _run()
except errors.CvzooError as exc:
    print(f'error: {{type(exc).__name__}}: {{exc}}', file=sys.stderr)
    sys.exit(2)
'''


def _image(folder, name='img.png', size=(32, 32)):
    Image.fromarray(numpy.full((*size, 3), 120, numpy.uint8)).save(folder / name)
    return str(folder / name)


def _resnet_state():
    """A state with one real resnet50 key, enough for the readers to reach the tensor."""
    return {'conv1.weight': numpy.zeros((64, 3, 7, 7), numpy.float32)}


# ---- the cases: (class, name, expected 'error' | 'answer', make(tmp) -> (argv, env))

CASES = []


def case(klass, expect='error'):
    def register(make):
        CASES.append((klass, make.__name__, expect, make))
        return make
    return register


def cvzoo(*argv):
    return [sys.executable, '-m', 'cvzoo', *argv]


def script(name, *argv):
    return [sys.executable, str(ROOT / 'scripts' / f'{name}.py'), *argv]


def api(body):
    code = API_PRELUDE.format(body='\n'.join('    ' + line for line in body.splitlines()))
    return [sys.executable, '-c', code]


# hostile files
@case('hostile files')
def pth_stride_zero_huge(tmp):
    big = pth_writer.Tensor('0', numpy.zeros(1, numpy.float32), 0, (100000, 100000), (0, 0))
    pth_writer.write_zip(tmp / 'w.pth', pth_writer.OrderedDictOf([('conv1.weight', big)]),
                         [big])
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def pth_legacy_claims_2_40_elements(tmp):
    t = pth_writer.Tensor('0', numpy.zeros(4, numpy.float32), 0, (4,), (1,))
    pth_writer.write_legacy(tmp / 'w.pth', pth_writer.OrderedDictOf([('conv1.weight', t)]),
                            [t])
    data = bytearray((tmp / 'w.pth').read_bytes())
    # the storage's element count, written as an int64 just before its 16 bytes of data
    at = len(data) - 16 - 8
    data[at:at + 8] = struct.pack('<q', 1 << 40)
    (tmp / 'w.pth').write_bytes(bytes(data))
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def pth_zip_bomb(tmp):
    t = pth_writer.tensor('0', numpy.zeros(4, numpy.float32))
    data = pth_writer.dumps(pth_writer.OrderedDictOf([('conv1.weight', t)]),
                            lambda t_: ('storage', pth_writer.Global('torch', 'FloatStorage'),
                                        '0', 'cpu', 4))
    with zipfile.ZipFile(tmp / 'w.pth', 'w', zipfile.ZIP_DEFLATED) as out:
        out.writestr('archive/data.pkl', data)
        out.writestr('archive/byteorder', 'little')
        out.writestr('archive/data/0', b'\0' * (1 << 29))  # 512 MiB in about 0.5 MiB
        out.writestr('archive/version', '3\n')
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def pth_nested_100000_deep(tmp):
    level = b'}' + b'X' + struct.pack('<I', 1) + b'a'  # a dict, and the key of its child
    data = b'\x80\x02' + level * 100000 + b'}' + b's' * 100000 + b'.'
    pth_writer.write_zip(tmp / 'w.pth', {}, [], data_pkl=data)
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def pth_negative_shape(tmp):
    t = pth_writer.Tensor('0', numpy.zeros(4, numpy.float32), 0, (-4, 1), (1, 1))
    pth_writer.write_zip(tmp / 'w.pth', pth_writer.OrderedDictOf([('conv1.weight', t)]), [t])
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def pth_offset_past_storage(tmp):
    t = pth_writer.Tensor('0', numpy.zeros(4, numpy.float32), 100, (4,), (1,))
    pth_writer.write_zip(tmp / 'w.pth', pth_writer.OrderedDictOf([('conv1.weight', t)]), [t])
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('hostile files')
def npz_header_claims_huge_shape(tmp):
    with zipfile.ZipFile(tmp / 'w.npz', 'w') as out:
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }"
        header = header.ljust(117) + '\n'
        out.writestr('conv1/W.npy', b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header))
                     + header.encode() + b'\0' * 16)
    return cvzoo('predict', _image(tmp), '--model', 'resnet50', '--pretrained-model',
                 str(tmp / 'w.npz')), {}


@case('hostile files')
def json_nested_100000_deep(tmp):
    (tmp / 'i.json').write_text('[' * 100000 + ']' * 100000)
    return api('from cvzoo.datasets.coco.coco_annotations import COCOAnnotations\n'
               f'COCOAnnotations({str(tmp / "i.json")!r})'), {}


@case('hostile files')
def coco_rle_60000_square(tmp):
    _coco(tmp, [{'id': 1, 'image_id': 1, 'category_id': 1, 'iscrowd': 1, 'area': 1,
                 'bbox': [0, 0, 1, 1],
                 'segmentation': {'size': [60000, 60000], 'counts': [3600000000]}}])
    return api(_read_instances(tmp)), {}


@case('hostile files')
def voc_metric_label_1e9(tmp):
    return api('import numpy\n'
               'from cvzoo.evaluators.metrics.eval_detection_voc import eval_detection_voc\n'
               'b = [numpy.array([[0, 0, 5, 5]], numpy.float32)]\n'
               'eval_detection_voc(b, [numpy.array([10**9], numpy.int32)],'
               ' [numpy.array([.9], numpy.float32)], b, [numpy.array([0], numpy.int32)])'), {}


@case('hostile files')
def darknet_weights_truncated(tmp):
    (tmp / 'w.weights').write_bytes(struct.pack('<iiiq', 0, 2, 0, 0) + b'\0' * 12)
    return cvzoo('predict', _image(tmp), '--model', 'yolo_fastest_xl', '--pretrained-model',
                 str(tmp / 'w.weights')), {}


@case('hostile files')
def h5_not_hdf5(tmp):
    (tmp / 'w.h5').write_bytes(b'not hdf5 at all')
    return cvzoo('predict', _image(tmp), '--model', 'resnet50', '--pretrained-model',
                 str(tmp / 'w.h5')), {}


# caches
@case('caches')
def home_is_a_file(tmp):
    (tmp / 'home').write_text('x')
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_HOME': str(tmp / 'home')}


@case('caches')
def home_is_a_dangling_link(tmp):
    (tmp / 'home').symlink_to(tmp / 'gone')
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_HOME': str(tmp / 'home')}


@case('caches')
def deadline_not_a_number(tmp):
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_DOWNLOAD_DEADLINE': 'abc'}


@case('caches')
def deadline_infinite(tmp):
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_DOWNLOAD_DEADLINE': 'inf'}


@case('caches')
def deadline_negative(tmp):
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_DOWNLOAD_DEADLINE': '-5'}


@case('caches')
def download_all_to_a_file(tmp):
    (tmp / 'f').write_text('x')
    return cvzoo('download', '--all', '--to', str(tmp / 'f'), '--model', 'resnet50'), {}


@case('caches')
def mirror_is_a_file(tmp):
    (tmp / 'm').write_text('x')
    return cvzoo('download', 'resnet50', 'imagenet'), {'CVZOO_WEIGHTS_MIRROR': str(tmp / 'm')}


@case('caches')
def offline_download_names_url_and_path(tmp):
    return cvzoo('download', 'resnet50', 'imagenet'), {
        'CVZOO_WEIGHTS_MIRROR': str(tmp), 'CVZOO_DOWNLOAD_DEADLINE': '3'}


# non-finite values
@case('non-finite')
def score_thresh_nan(tmp):
    return cvzoo('predict', '--score-thresh', 'nan'), {}


@case('non-finite')
def score_thresh_above_one(tmp):
    return cvzoo('predict', '--score-thresh', '2'), {}


@case('non-finite')
def weights_hold_nan(tmp):
    path = str(tmp / 'w.npz')
    return api('import numpy\n'
               'from cvzoo.models import get_model\n'
               'from cvzoo.core.serializers import npz\n'
               'm = get_model("small_cnn", n_class=3)\n'
               'm.predict([numpy.zeros((3, 8, 8), numpy.float32)])\n'
               'next(iter(m.params())).array[...] = numpy.nan\n'
               f'npz.save_npz({path!r}, m)\n'
               f'get_model("small_cnn", n_class=3, pretrained_model={path!r})'), {}


@case('non-finite')
def float_tiff_with_nan(tmp):
    Image.fromarray(numpy.full((16, 16), numpy.nan, numpy.float32), mode='F').save(
        tmp / 'nan.tif')
    return cvzoo('predict', str(tmp / 'nan.tif')), {}


@case('non-finite')
def predict_array_with_inf(tmp):
    return api('import numpy\n'
               'from cvzoo.models import get_model\n'
               'm = get_model("small_cnn", n_class=3)\n'
               'x = numpy.zeros((3, 8, 8), numpy.float32); x[0, 0, 0] = numpy.inf\n'
               'm.predict([x])'), {}


@case('non-finite')
def optimizer_lr_nan(tmp):
    return api('from cvzoo.core.optimizers import MomentumSGD\nMomentumSGD(lr=float("nan"))'), {}


@case('non-finite')
def optimizer_lr_negative(tmp):
    return api('from cvzoo.core.optimizers import Adam\nAdam(alpha=-1)'), {}


# COCO and VOC readers
def _coco(tmp, annotations, images=None, categories=None):
    (tmp / 'images').mkdir(exist_ok=True)
    Image.fromarray(numpy.zeros((8, 8, 3), numpy.uint8)).save(tmp / 'images' / 'a.png')
    data = {'images': images or [{'id': 1, 'file_name': 'a.png', 'width': 8, 'height': 8}],
            'categories': categories or [{'id': 1, 'name': 'thing'}],
            'annotations': annotations}
    (tmp / 'i.json').write_text(json.dumps(data))


def _read_instances(tmp):
    return ('from cvzoo.datasets.coco.coco_instance_segmentation_dataset import '
            'COCOInstanceSegmentationDataset as D\n'
            f'd = D(_json_path={str(tmp / "i.json")!r}, _image_dir={str(tmp / "images")!r},'
            ' use_crowded=True)\n'
            'for i in range(len(d)):\n'
            '    d[i]')


def _annotation(**fields):
    base = {'id': 1, 'image_id': 1, 'category_id': 1, 'iscrowd': 0, 'area': 4,
            'bbox': [1, 1, 2, 2], 'segmentation': [[1, 1, 3, 1, 3, 3]]}
    base.update(fields)
    return base


def _coco_case(**fields):
    def make(tmp):
        _coco(tmp, [_annotation(**fields)])
        return api(_read_instances(tmp)), {}
    return make


for _name, _fields in {
        'coco_list_image_id': {'image_id': [1]},
        'coco_list_category_id': {'category_id': [1]},
        'coco_string_area': {'area': 'big'},
        'coco_string_iscrowd': {'iscrowd': 'no'},
        'coco_nan_polygon_vertex': {'segmentation': [[1, 1, float('nan'), 1, 3, 3]]},
        'coco_inf_polygon_vertex': {'segmentation': [[1, 1, 1e400, 1, 3, 3]]},
        'coco_odd_polygon': {'segmentation': [[1, 1, 3, 1, 3]]},
        'coco_segmentation_is_a_number': {'segmentation': 5},
        'coco_rle_size_mismatch': {'iscrowd': 1,
                                   'segmentation': {'size': [4, 4], 'counts': [16]}},
        'coco_rle_negative_count': {'iscrowd': 1,
                                    'segmentation': {'size': [8, 8], 'counts': [70, -6]}},
        'coco_rle_counts_short': {'iscrowd': 1, 'segmentation': {'size': [8, 8], 'counts': [3]}},
        'coco_category_points_nowhere': {'category_id': 99},
        'coco_bbox_three_numbers': {'bbox': [1, 2, 3]},
}.items():
    _make = _coco_case(**_fields)
    _make.__name__ = _name
    case('annotations')(_make)


@case('annotations', expect='answer')
def coco_two_point_polygon(tmp):
    """A polygon of two points covers no pixel; exporters write them, so it is read."""
    return _coco_case(segmentation=[[1, 1, 3, 1]])(tmp)


@case('annotations')
def coco_string_width(tmp):
    _coco(tmp, [_annotation()], images=[{'id': 1, 'file_name': 'a.png', 'width': '8',
                                        'height': 8}])
    return api(_read_instances(tmp)), {}


@case('annotations')
def coco_int_file_name(tmp):
    _coco(tmp, [_annotation()], images=[{'id': 1, 'file_name': 5, 'width': 8, 'height': 8}])
    return api(_read_instances(tmp)), {}


def _voc(tmp, box='<xmin>2</xmin><ymin>2</ymin><xmax>5</xmax><ymax>5</ymax>', size=(8, 8),
         xml_size=(8, 8), name='<name>thing</name>', difficult='0'):
    for folder in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (tmp / 'voc' / folder).mkdir(parents=True, exist_ok=True)
    Image.fromarray(numpy.zeros((*size, 3), numpy.uint8)).save(tmp / 'voc/JPEGImages/a.jpg')
    (tmp / 'voc/Annotations/a.xml').write_text(
        f'<annotation><size><width>{xml_size[1]}</width><height>{xml_size[0]}</height>'
        f'<depth>3</depth></size><object>{name}<difficult>{difficult}</difficult>'
        f'<bndbox>{box}</bndbox></object></annotation>')
    (tmp / 'voc/ImageSets/Main/train.txt').write_text('a\n')
    return api('from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset\n'
               f'd = VOCBboxDataset({str(tmp / "voc")!r}, split="train")\n'
               'd[0]'), {}


@case('annotations')
def voc_size_disagrees_with_image(tmp):
    return _voc(tmp, size=(8, 12), xml_size=(12, 8))


@case('annotations')
def voc_bndbox_not_a_number(tmp):
    return _voc(tmp, box='<xmin>two</xmin><ymin>2</ymin><xmax>5</xmax><ymax>5</ymax>')


@case('annotations')
def voc_object_without_name(tmp):
    return _voc(tmp, name='')


@case('annotations')
def voc_difficult_not_0_or_1(tmp):
    return _voc(tmp, difficult='yes')


# user mistakes at the command line and in the scripts
@case('command line')
def predict_device_cuda_without_cupy(tmp):
    return cvzoo('predict', '--device', 'cuda:0'), {}


@case('command line')
def predict_out_into_missing_folder(tmp):
    return cvzoo('predict', '--out', str(tmp / 'no' / 'x.png')), {}


@case('command line', expect='answer')
def predict_out_new_folder_one_image(tmp):
    return cvzoo('predict', '--out', str(tmp / 'new') + '/'), {}


@case('command line')
def predict_missing_image(tmp):
    return cvzoo('predict', str(tmp / 'nope.jpg')), {}


@case('command line')
def predict_image_not_an_image(tmp):
    (tmp / 'x.jpg').write_text('hello')
    return cvzoo('predict', str(tmp / 'x.jpg')), {}


@case('command line')
def predict_unknown_model(tmp):
    return cvzoo('predict', '--model', 'resnet5', '--pretrained-model', 'imagenet'), {}


@case('command line')
def predict_trained_file_of_another_model(tmp):
    _small_cnn_final(tmp)
    return cvzoo('predict', '--model', 'yolo_fastest_xl', '--pretrained-model',
                 str(tmp / 'model.npz')), {}


@case('command line')
def predict_trained_file_with_damaged_config(tmp):
    _small_cnn_final(tmp)
    arrays = dict(numpy.load(tmp / 'model.npz'))
    arrays['__cvzoo_model__'] = numpy.frombuffer(b'{"name": "small_cnn", "kw', numpy.uint8)
    numpy.savez(tmp / 'model.npz', **arrays)
    return cvzoo('predict', _image(tmp), '--model', 'small_cnn', '--pretrained-model',
                 str(tmp / 'model.npz')), {}


def _small_cnn_final(tmp):
    """tmp/model.npz: small_cnn (3 classes, random weights) saved as a trained model."""
    subprocess.run([sys.executable, '-c',
                    'from cvzoo.models import get_model\n'
                    'from cvzoo.models.weights.trained_model import save_trained_model\n'
                    'save_trained_model(get_model("small_cnn", n_class=3), '
                    f'{str(tmp / "model.npz")!r}, "small_cnn", n_class=3)'],
                   env={**os.environ, 'PYTHONPATH': str(ROOT)}, check=True, timeout=120)


@case('command line')
def export_opset_99(tmp):
    return cvzoo('export', 'yolo_fastest_xl', '--pretrained-model', 'voc', '--opset', '99',
                 '--out', str(tmp / 'm.onnx')), {}


@case('command line')
def export_out_into_missing_folder(tmp):
    return cvzoo('export', 'yolo_fastest_xl', '--pretrained-model', 'voc',
                 '--out', str(tmp / 'no' / 'm.onnx')), {}


@case('command line')
def topk_zero(tmp):
    return cvzoo('predict', '--topk', '0'), {}


def _train(name, *argv):
    def make(tmp):
        return script(name, '--out', str(tmp / 'r'), *argv), {}
    return make


for _name, _argv in {
        'classifier_batchsize_0': ('train_classifier', '--batchsize', '0'),
        'classifier_iteration_0': ('train_classifier', '--iteration', '0'),
        'classifier_iteration_negative': ('train_classifier', '--iteration', '-3'),
        'classifier_lr_nan': ('train_classifier', '--lr', 'nan'),
        'classifier_lr_negative': ('train_classifier', '--lr', '-1'),
        'classifier_insize_0': ('train_classifier', '--insize', '0'),
        'classifier_batch_far_above_dataset': ('train_classifier', '--batchsize', '100000',
                                               '--iteration', '2'),
        'yolo_insize_0': ('train_yolo', '--insize', '0', '--dataset', 'nope'),
        'ssd_lr_inf': ('train_ssd', '--lr', 'inf', '--model', 'ssd_tiny'),
        'ssd_missing_dataset': ('train_ssd', '--dataset', '/nonexistent', '--model',
                                'ssd_tiny'),
        'mask_rcnn_missing_json': ('train_mask_rcnn', '--dataset', '/nonexistent.json'),
        'classifier_resume_missing_file': ('train_classifier', '--resume', '/nonexistent'),
}.items():
    _make = _train(*_argv)
    _make.__name__ = _name
    case('command line')(_make)


@case('command line')
def train_out_parent_missing(tmp):
    return script('train_classifier', '--iteration', '1', '--out',
                  str(tmp / 'no' / 'deeper' / 'r')), {}


@case('command line')
def convert_refused_pickle(tmp):
    pth_writer.write_zip(tmp / 'w.pth', {}, [], data_pkl=b'\x80\x02cos\nsystem\n.')
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('command line')
def convert_negative_n_class(tmp):
    (tmp / 'w.pth').write_bytes(b'')
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--n-class', '-3'), {}


@case('command line')
def eval_batchsize_0(tmp):
    return script('eval_detection', '--model', 'yolo_fastest_xl', '--pretrained-model', 'voc',
                  '--dataset', str(tmp), '--batchsize', '0'), {}


@case('command line')
def eval_dataset_missing(tmp):
    return script('eval_detection', '--model', 'yolo_fastest_xl', '--pretrained-model', 'voc',
                  '--dataset', str(tmp / 'none')), {}


@case('command line')
def shapes_dataset_negative_count(tmp):
    return script('make_shapes_dataset', '--out', str(tmp / 's'), '--n-train', '-2'), {}


@case('command line')
def models_info_unknown(tmp):
    return cvzoo('models', '--info', 'resnet5'), {}


@case('command line')
def download_unknown_key(tmp):
    return cvzoo('download', 'resnet50', 'imagenet21k'), {}


@case('command line')
def predict_empty_image_file(tmp):
    (tmp / 'e.png').write_bytes(b'')
    return cvzoo('predict', str(tmp / 'e.png')), {}


@case('hostile files')
def predict_decompression_bomb_png(tmp):
    import zlib
    width = height = 60000
    def chunk(kind, data):
        return (struct.pack('>I', len(data)) + kind + data
                + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))
    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    (tmp / 'bomb.png').write_bytes(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header)
                                   + chunk(b'IDAT', zlib.compress(b'\0' * 1000))
                                   + chunk(b'IEND', b''))
    return cvzoo('predict', str(tmp / 'bomb.png')), {}


@case('command line')
def predict_image_is_a_folder(tmp):
    (tmp / 'd.png').mkdir()
    return cvzoo('predict', str(tmp / 'd.png')), {}


@case('hostile files')
def pretrained_model_empty_npz(tmp):
    (tmp / 'w.npz').write_bytes(b'')
    return cvzoo('predict', '--model', 'resnet50', '--pretrained-model',
                 str(tmp / 'w.npz')), {}


@case('caches')
def mirror_url_refuses_connection(tmp):
    return cvzoo('download', 'resnet50', 'imagenet'), {
        'CVZOO_WEIGHTS_MIRROR': 'http://127.0.0.1:9/', 'CVZOO_DOWNLOAD_DEADLINE': '5'}


@case('command line')
def classifier_dataset_empty_folder(tmp):
    (tmp / 'data').mkdir()
    return script('train_classifier', '--dataset', str(tmp / 'data'), '--out',
                  str(tmp / 'r')), {}


@case('command line')
def classifier_dataset_one_class(tmp):
    (tmp / 'data' / 'only').mkdir(parents=True)
    for i in range(4):
        _image(tmp / 'data' / 'only', f'{i}.png')
    return script('train_classifier', '--dataset', str(tmp / 'data'), '--iteration', '1',
                  '--batchsize', '2', '--out', str(tmp / 'r')), {}


@case('command line')
def convert_destination_folder_missing(tmp):
    t = pth_writer.tensor('0', numpy.zeros(4, numpy.float32))
    pth_writer.write_zip(tmp / 'w.pth', pth_writer.OrderedDictOf([('conv1.weight', t)]), [t])
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'no' / 'o.npz'),
                  '--model', 'resnet50', '--source', 'torchvision'), {}


@case('command line')
def convert_source_is_a_folder(tmp):
    (tmp / 'w.pth').mkdir()
    return script('convert_weights', str(tmp / 'w.pth'), str(tmp / 'o.npz'), '--model',
                  'resnet50', '--source', 'torchvision'), {}


@case('command line')
def export_size_zero(tmp):
    return cvzoo('export', 'yolo_fastest_xl', '--pretrained-model', 'voc', '--size', '0', '0',
                 '--out', str(tmp / 'm.onnx')), {}


@case('command line')
def shapes_dataset_size_zero(tmp):
    return script('make_shapes_dataset', '--out', str(tmp / 's'), '--size', '0'), {}


@case('command line')
def shapes_dataset_out_is_a_file(tmp):
    (tmp / 's').write_text('mine')
    return script('make_shapes_dataset', '--out', str(tmp / 's'), '--n-train', '2',
                  '--n-test', '1'), {}


@case('command line')
def segmentation_eval_data_dir_missing(tmp):
    return script('eval_semantic_segmentation', '--model', 'espnet', '--pretrained-model',
                  'camvid', '--dataset', 'camvid-test', '--data-dir', str(tmp / 'none')), {}


@case('non-finite')
def metric_boxes_nan(tmp):
    return api('import numpy\n'
               'from cvzoo.evaluators.metrics.eval_detection_voc import eval_detection_voc\n'
               'b = [numpy.array([[0, 0, numpy.nan, 5]], numpy.float32)]\n'
               'l = [numpy.array([0], numpy.int32)]\n'
               'eval_detection_voc(b, l, [numpy.array([.9], numpy.float32)], b, l)'), {}


# distributed training
@case('distributed', expect='answer')
def multi_node_optimizer_chained_setup(tmp):
    return api('from cvzoo.core import optimizers\n'
               'from cvzoo.core import communicators\n'
               'from cvzoo.core import links as L\n'
               'comm = communicators.create_communicator("mpi", abort_on_error=False)\n'
               'opt = communicators.create_multi_node_optimizer(optimizers.Adam(), comm)'
               '.setup(L.Linear(2, 2))\n'
               'assert type(opt).__name__ != "Adam", type(opt)'), {}


def run(make, tmp):
    argv, env = make(tmp)
    full_env = {**os.environ, 'PYTHONPATH': str(ROOT), 'CVZOO_HOME': str(tmp / 'home'),
                **env}
    full_env.pop('CVZOO_WEIGHTS_MIRROR', None) if 'CVZOO_WEIGHTS_MIRROR' not in env else None

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    try:
        done = subprocess.run(argv, cwd=tmp, env=full_env, capture_output=True, text=True,
                              timeout=TIMEOUT_S, preexec_fn=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 'HANG', ''
    err = done.stderr.strip()
    if 'MemoryError' in err or done.returncode in (-9, 137):
        return 'EXHAUSTED', err.splitlines()[-1] if err else ''
    if 'Traceback (most recent call last)' in err:
        return 'TRACEBACK', err.splitlines()[-1]
    if done.returncode == 0:
        return 'answer', done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ''
    return 'error', err.splitlines()[-1] if err else f'exit {done.returncode}, no message'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', help='run only the cases of this class')
    parser.add_argument('--case', help='run only the case of this name')
    parser.add_argument('--verbose', action='store_true', help='print each message in full')
    args = parser.parse_args(argv)
    counts = {}
    for klass, name, expect, make in CASES:
        if (args.only and klass != args.only) or (args.case and name != args.case):
            continue
        with tempfile.TemporaryDirectory() as folder:
            outcome, message = run(make, pathlib.Path(folder))
        if outcome == 'answer' and expect == 'error':
            outcome = 'SILENT'
        counts.setdefault(klass, {}).setdefault(outcome, 0)
        counts[klass][outcome] += 1
        shown = message if args.verbose else message[:150]
        print(f'{klass:14s} {name:42s} {outcome:10s} {shown}', flush=True)
    outcomes = ('error', 'answer', 'SILENT', 'TRACEBACK', 'HANG', 'EXHAUSTED')
    print('\n| class | cases | ' + ' | '.join(outcomes) + ' |')
    print('| --- ' * (len(outcomes) + 2) + '|')
    for klass, row in counts.items():
        print(f'| {klass} | {sum(row.values())} | '
              + ' | '.join(str(row.get(o, 0)) for o in outcomes) + ' |')


if __name__ == '__main__':
    main()
