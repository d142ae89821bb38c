"""data_dir='auto' downloads: served from the local http_server, hash-checked, unpacked
all or nothing, reused, and refused (path traversal, wrong hash, offline) with errors that
say where to put the files."""

import io
import json
import socket
import tarfile
import zipfile

import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.datasets import (ADE20KSemanticSegmentationDataset, COCOBboxDataset,
                            COCOInstanceSegmentationDataset, SBDInstanceSegmentationDataset,
                            VOCBboxDataset, VOCSemanticSegmentationDataset)
from cvzoo.datasets.ade20k import ade20k_semantic_segmentation_dataset as ade20k_module
from cvzoo.datasets.coco import coco_annotations
from cvzoo.datasets.sbd import sbd_instance_segmentation_dataset as sbd_module
from cvzoo.datasets.voc import voc_paths
from cvzoo.testing import (assert_is_bbox_dataset, assert_is_instance_segmentation_dataset,
                           assert_is_semantic_segmentation_dataset)
from cvzoo.utils import download, paths

H, W = 8, 12
VOC_TAR = 'VOCtrainval_11-May-2012.tar'
XML = ('<annotation><size><width>12</width><height>8</height></size><object><name>dog'
       '</name><difficult>0</difficult><bndbox><xmin>2</xmin><ymin>2</ymin><xmax>9</xmax>'
       '<ymax>7</ymax></bndbox></object></annotation>')


@pytest.fixture(autouse=True)
def _dataset_root(tmp_path, monkeypatch):
    """A private dataset root, no mirror, and short retry pauses."""
    monkeypatch.setenv('CVZOO_DATASET_ROOT', str(tmp_path / 'datasets'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)
    monkeypatch.setattr(download, '_RETRY_PAUSE', 0.01)


def _png_bytes(array, fmt='PNG'):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format=fmt)
    return buffer.getvalue()


def _rgb_bytes(fmt='JPEG'):
    return _png_bytes(numpy.full((H, W, 3), 120, numpy.uint8), fmt)


def _write_tar(path, files, mode='w'):
    with tarfile.open(path, mode) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _write_zip(path, files):
    with zipfile.ZipFile(path, 'w') as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def _voc_files(year='2012', ids=('a', 'b'), lists=(('Main', 'trainval'),
                                                   ('Segmentation', 'train'))):
    base = f'VOCdevkit/VOC{year}/'
    files = {}
    label = numpy.zeros((H, W), numpy.uint8)
    label[2:6, 3:9], label[0] = 12, 255
    for image_id in ids:
        files[f'{base}JPEGImages/{image_id}.jpg'] = _rgb_bytes()
        files[f'{base}Annotations/{image_id}.xml'] = XML.encode()
        files[f'{base}SegmentationClass/{image_id}.png'] = _png_bytes(label)
    for listing, split in lists:
        files[f'{base}ImageSets/{listing}/{split}.txt'] = '\n'.join(ids).encode()
    return files


def _serve_voc(http_server, monkeypatch, files=None, key=('2012', 'trainval'), name=VOC_TAR):
    _write_tar(http_server.root / name, _voc_files() if files is None else files)
    monkeypatch.setitem(voc_paths.VOC_URLS, key, http_server.url_for(name))
    return name


def _files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob('*') if p.is_file())


def test_voc_auto_downloads_unpacks_loads_and_reuses(http_server, monkeypatch):
    name = _serve_voc(http_server, monkeypatch)
    dataset = VOCBboxDataset(split='trainval', year='2012')
    assert http_server.count(name) == 1
    root = paths.dataset_root() / 'voc' / 'VOCdevkit' / 'VOC2012'
    assert dataset.data_dir == root and len(dataset) == 2
    assert_is_bbox_dataset(dataset, n_fg_class=20)
    assert _files_under(paths.dataset_root()) == sorted(
        f'voc/{name}' for name in _voc_files())  # no staging folder left behind
    assert not (paths.cvzoo_home() / 'archives' / name).exists()  # the archive is deleted
    VOCBboxDataset(split='trainval', year='2012')
    segmentation = VOCSemanticSegmentationDataset(split='train', year='2012')
    assert_is_semantic_segmentation_dataset(segmentation, n_class=21)
    assert http_server.count(name) == 1


def test_voc2007_trainval_and_test_archives_merge(http_server, monkeypatch):
    trainval = _serve_voc(http_server, monkeypatch, _voc_files('2007', ('a',)),
                          ('2007', 'trainval'), 'VOCtrainval_06-Nov-2007.tar')
    test = _serve_voc(http_server, monkeypatch,
                      _voc_files('2007', ('t',), lists=(('Main', 'test'),)),
                      ('2007', 'test'), 'VOCtest_06-Nov-2007.tar')
    assert len(VOCBboxDataset(split='trainval', year='2007')) == 1
    test_set = VOCBboxDataset(split='test', year='2007')
    assert test_set.ids == ['t']
    assert len(VOCBboxDataset(split='trainval', year='2007')) == 1  # still there after merge
    assert http_server.count(trainval) == 1 and http_server.count(test) == 1


def test_dropped_connection_is_resumed(http_server, monkeypatch):
    name = _serve_voc(http_server, monkeypatch)
    http_server.drop_after(name, 3000)
    assert len(VOCBboxDataset(year='2012')) == 2
    assert http_server.count(name) == 2


def test_wrong_hash_is_refused_and_nothing_is_unpacked(http_server, monkeypatch):
    name = _serve_voc(http_server, monkeypatch)
    monkeypatch.setitem(voc_paths.VOC_SHA256, ('2012', 'trainval'), '0' * 64)
    with pytest.raises(errors.DownloadError, match='sha256 mismatch') as info:
        VOCBboxDataset(year='2012')
    assert 'trainval.txt' in str(info.value) and 'by hand' in str(info.value)
    assert _files_under(paths.dataset_root()) == []
    archives = paths.cvzoo_home() / 'archives'
    assert not (archives / name).exists() and not (archives / f'{name}.part').exists()


def _traversal(files, kind):
    evil = '../evil.txt' if kind != 'absolute' else '/tmp/cvzoo_evil.txt'
    return dict(files, **{evil: b'owned'})


@pytest.mark.parametrize('kind', ['dotdot', 'absolute'])
def test_path_traversal_entry_is_refused(http_server, monkeypatch, tmp_path, kind):
    _serve_voc(http_server, monkeypatch, _traversal(_voc_files(), kind))
    with pytest.raises(errors.CorruptFileError, match='refusing entry'):
        VOCBboxDataset(year='2012')
    assert _files_under(tmp_path / 'datasets') == []
    assert not (tmp_path / 'datasets' / 'evil.txt').exists()


def _damage(path, kind):
    """Truncate a tar (seen when listing), or corrupt the last member of a stored zip
    (seen only after the first members were written: the CRC check fails mid-way)."""
    if kind == 'truncated_tar':
        whole = _write_tar(path, _voc_files()).read_bytes()
        path.write_bytes(whole[:len(whole) * 2 // 3])
    else:
        files = dict(_voc_files(), **{'VOCdevkit/zz_last.bin': b'LAST' * 100})
        whole = _write_zip(path, files).read_bytes()
        path.write_bytes(whole.replace(b'LASTLAST', b'LASTLOST', 1))


@pytest.mark.parametrize('kind', ['truncated_tar', 'corrupt_zip_member'])
def test_damaged_archive_leaves_nothing_and_is_fetched_again(http_server, monkeypatch, kind):
    name = _serve_voc(http_server, monkeypatch)
    _damage(http_server.root / name, kind)
    with pytest.raises(errors.CorruptFileError, match=name):
        VOCBboxDataset(year='2012')
    assert _files_under(paths.dataset_root()) == []
    _write_tar(http_server.root / name, _voc_files())
    assert len(VOCBboxDataset(year='2012')) == 2
    assert http_server.count(name) == 2


def _closed_port_url(name):
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return f'http://127.0.0.1:{port}/{name}'


def test_offline_error_says_where_to_put_the_files(monkeypatch):
    monkeypatch.setitem(voc_paths.VOC_URLS, ('2012', 'trainval'), _closed_port_url(VOC_TAR))
    with pytest.raises(errors.DownloadError) as info:
        VOCBboxDataset(year='2012')
    message = str(info.value)
    list_file = paths.dataset_root() / 'voc' / 'VOCdevkit' / 'VOC2012' / 'ImageSets' / 'Main'
    assert str(list_file / 'trainval.txt') in message and 'data_dir=' in message
    assert VOC_TAR in message  # the URL, and where the archive itself may go


def _coco_files(year='2017'):
    annotations = [{'id': 1, 'image_id': 5, 'category_id': 3, 'bbox': [1, 1, 6, 4],
                    'area': 24, 'iscrowd': 0, 'segmentation': [[1, 1, 7, 1, 7, 5, 1, 5]]}]
    data = {'images': [{'id': 5, 'file_name': '000005.jpg', 'width': W, 'height': H},
                       {'id': 9, 'file_name': '000009.jpg', 'width': W, 'height': H}],
            'categories': [{'id': 1, 'name': 'person'}, {'id': 3, 'name': 'car'}],
            'annotations': annotations}
    json_files = {f'annotations/instances_val{year}.json': json.dumps(data).encode()}
    images = {f'val{year}/{n}': _rgb_bytes() for n in ('000005.jpg', '000009.jpg')}
    return json_files, images


def _serve_coco(http_server, monkeypatch, images=None):
    json_files, good_images = _coco_files()
    _write_zip(http_server.root / 'annotations_trainval2017.zip', json_files)
    _write_zip(http_server.root / 'val2017.zip', good_images if images is None else images)
    monkeypatch.setattr(coco_annotations, 'COCO_ANNOTATION_URL',
                        http_server.url + '/annotations_trainval{year}.zip')
    monkeypatch.setattr(coco_annotations, 'COCO_IMAGE_URL', http_server.url + '/{split}{year}.zip')


def test_coco_auto_downloads_both_archives_and_reuses(http_server, monkeypatch):
    _serve_coco(http_server, monkeypatch)
    dataset = COCOBboxDataset(split='val', year='2017')
    assert len(dataset) == 2
    assert_is_bbox_dataset(dataset, n_fg_class=80)
    assert dataset[0][2].tolist() == [2]  # category 3 is 'car', label 2
    masks = COCOInstanceSegmentationDataset(split='val', year='2017')
    assert_is_instance_segmentation_dataset(masks, n_fg_class=80)
    for name in ('annotations_trainval2017.zip', 'val2017.zip'):
        assert http_server.count(name) == 1
    assert sorted(p.name for p in (paths.dataset_root() / 'coco').iterdir()) == [
        'annotations', 'val2017']


def test_coco_wrong_image_hash_unpacks_no_image(http_server, monkeypatch):
    _serve_coco(http_server, monkeypatch)
    monkeypatch.setitem(coco_annotations.COCO_SHA256, 'val2017.zip', 'f' * 64)
    with pytest.raises(errors.DownloadError, match='sha256 mismatch.*val2017'):
        COCOBboxDataset(split='val', year='2017')
    assert not (paths.dataset_root() / 'coco' / 'val2017').exists()


def test_coco_path_traversal_in_zip_is_refused(http_server, monkeypatch, tmp_path):
    images = _coco_files()[1]
    _serve_coco(http_server, monkeypatch, dict(images, **{'val2017/../../evil.jpg': b'x'}))
    with pytest.raises(errors.CorruptFileError, match='refusing entry'):
        COCOBboxDataset(split='val', year='2017')
    assert not (paths.dataset_root() / 'coco' / 'val2017').exists()
    assert not (tmp_path / 'datasets' / 'evil.jpg').exists()


def test_coco_offline_names_the_folder(monkeypatch):
    monkeypatch.setattr(coco_annotations, 'COCO_ANNOTATION_URL',
                        _closed_port_url('annotations_trainval{year}.zip'))
    with pytest.raises(errors.DownloadError, match='instances_val2017.json.*by hand'):
        COCOBboxDataset(split='val', year='2017')


def _ade20k_files():
    base = 'ADEChallengeData2016/'
    label = numpy.zeros((H, W), numpy.uint8)
    label[1:5, 2:7] = 150
    return {f'{base}images/validation/ADE_val_00000001.jpg': _rgb_bytes(),
            f'{base}annotations/validation/ADE_val_00000001.png': _png_bytes(label),
            f'{base}images/training/ADE_train_00000001.jpg': _rgb_bytes(),
            f'{base}annotations/training/ADE_train_00000001.png': _png_bytes(label)}


def test_ade20k_auto_downloads_and_reuses(http_server, monkeypatch):
    name = 'ADEChallengeData2016.zip'
    _write_zip(http_server.root / name, _ade20k_files())
    monkeypatch.setattr(ade20k_module, 'ADE20K_URL', http_server.url_for(name))
    dataset = ADE20KSemanticSegmentationDataset(split='val')
    assert_is_semantic_segmentation_dataset(dataset, n_class=150)
    assert len(ADE20KSemanticSegmentationDataset(split='train')) == 1
    assert http_server.count(name) == 1


def test_ade20k_offline_names_the_folder(monkeypatch):
    monkeypatch.setattr(ade20k_module, 'ADE20K_URL', _closed_port_url('ADE.zip'))
    with pytest.raises(errors.DownloadError, match='images/validation.*by hand'):
        ADE20KSemanticSegmentationDataset(split='val')


def test_sbd_auto_downloads_the_tgz_and_reuses(http_server, monkeypatch):
    scipy_io = pytest.importorskip('scipy.io')
    instance = numpy.zeros((H, W), numpy.uint8)
    instance[2:5, 3:9] = 1
    mat = io.BytesIO()
    scipy_io.savemat(mat, {'GTinst': {'Segmentation': instance,
                                      'Categories': numpy.array([[12]], numpy.uint8)}})
    base = 'benchmark_RELEASE/dataset/'
    files = {f'{base}img/2008_000001.jpg': _rgb_bytes(), f'{base}train.txt': b'2008_000001\n',
             f'{base}inst/2008_000001.mat': mat.getvalue()}
    _write_tar(http_server.root / 'benchmark.tgz', files, 'w:gz')
    monkeypatch.setattr(sbd_module, 'SBD_URL', http_server.url_for('benchmark.tgz'))
    dataset = SBDInstanceSegmentationDataset(split='train')
    assert_is_instance_segmentation_dataset(dataset, n_fg_class=20)
    assert dataset[0][2].tolist() == [11]
    SBDInstanceSegmentationDataset(split='train')
    assert http_server.count('benchmark.tgz') == 1
    with pytest.raises(ValueError, match='split'):  # refused before any download
        SBDInstanceSegmentationDataset(split='trainval')
    assert http_server.count('benchmark.tgz') == 1


def test_unknown_voc_split_is_refused_before_downloading(http_server, monkeypatch):
    name = _serve_voc(http_server, monkeypatch)
    with pytest.raises(ValueError, match='split'):
        VOCBboxDataset(split='trainval_typo', year='2012')
    assert http_server.count(name) == 0
