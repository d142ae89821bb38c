"""scripts/eval_detection.py, cvzoo.models.detection.evaluate and the detection datasets of
cvzoo.datasets.registry on tiny VOC/COCO folders."""

import json
import pathlib
import shutil

import numpy
import pytest

from cvzoo.datasets import registry
from cvzoo.models.detection import evaluate
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.utils import image

from tests.helpers.darknet_cfgs import TINY_YOLO_CFG as TINY_CFG
from tests.helpers.scripts import load_script

# dog.jpg (768 x 576): the obvious objects, boxed by hand (x_min, y_min, x_max, y_max)
DOG_OBJECTS = [('bicycle', (125, 140, 570, 460), 0), ('car', (465, 75, 690, 170), 0),
               ('dog', (130, 220, 315, 540), 0), ('person', (0, 0, 5, 5), 1)]


@pytest.fixture(scope='module')
def script():
    return load_script('eval_detection')


def _xml(objects, size):
    height, width = size
    parts = [f'<annotation><size><width>{width}</width><height>{height}</height>'
             '<depth>3</depth></size>']
    for name, (x_min, y_min, x_max, y_max), difficult in objects:
        parts.append(f'<object><name>{name}</name><difficult>{difficult}</difficult><bndbox>'
                     f'<xmin>{x_min + 1}</xmin><ymin>{y_min + 1}</ymin><xmax>{x_max}</xmax>'
                     f'<ymax>{y_max}</ymax></bndbox></object>')
    return ''.join(parts) + '</annotation>'


def _voc_folder(root, images):
    """images: {id: (image path or CHW array, objects)} -> a VOC-layout folder."""
    for sub in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name, (img, objects) in images.items():
        if isinstance(img, pathlib.Path):
            shutil.copy(img, root / 'JPEGImages' / f'{name}.jpg')
        else:
            image.write_image(img, root / 'JPEGImages' / f'{name}.jpg')
        size = image.read_image(root / 'JPEGImages' / f'{name}.jpg').shape[1:]
        (root / 'Annotations' / f'{name}.xml').write_text(_xml(objects, size))
    (root / 'ImageSets' / 'Main' / 'test.txt').write_text('\n'.join(images) + '\n')
    return root


def test_voc_folder_full_evaluator_run_with_a_tiny_model(script, tmp_path, rng):
    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_CFG)
    model = DarknetDetector(cfg, label_names=('cat', 'dog'))
    model.use_preset('evaluate')
    images = {f'{i:06d}': (rng.uniform(0, 255, (3, 40 + i, 50)),
                           [('dog', (5, 5, 30, 30), 0), ('cat', (10, 2, 45, 20), i % 2)])
              for i in range(3)}
    root = _voc_folder(tmp_path / 'voc', images)
    data = registry.load_detection_dataset(str(root), model.label_names, limit=2)
    assert (data.protocol, len(data.dataset), data.label_names) == ('voc', 2, ('cat', 'dog'))
    report = script.build_evaluator(data, model, None, batchsize=2).evaluate()
    assert set(report) == {'map', 'ap/cat', 'ap/dog'}
    assert 0 <= report['map'] <= 1
    text = evaluate.format_report(report, data)
    assert 'ap' not in text.split('\n')[0] and 'mAP' in text and 'dog' in text


def _coco_folder(root, categories, img):
    (root / 'annotations').mkdir(parents=True)
    (root / 'val').mkdir()
    image.write_image(img, root / 'val' / 'a.png')
    annotations = [{'id': k + 1, 'image_id': 1, 'category_id': c['id'], 'iscrowd': 0,
                    'bbox': [2 * k, 2, 5, 6], 'area': 30.0} for k, c in enumerate(categories)]
    (root / 'annotations' / 'instances_val.json').write_text(json.dumps({
        'images': [{'id': 1, 'file_name': 'a.png', 'width': 20, 'height': 16}],
        'annotations': annotations, 'categories': categories}))
    return root


def test_coco_folder_labels_follow_the_model_names(tmp_path, rng):
    categories = [{'id': 3, 'name': 'dog'}, {'id': 5, 'name': 'cat'}]
    root = _coco_folder(tmp_path / 'coco', categories, rng.uniform(0, 255, (3, 16, 20)))
    data = registry.load_detection_dataset(str(root), ('cat', 'dog'))
    assert data.protocol == 'coco' and data.label_names == ('cat', 'dog')
    _, bbox, label, crowded, area = data.dataset[0]
    numpy.testing.assert_array_equal(label, [1, 0])  # dog, cat in the model's order
    assert bbox.shape == (2, 4) and crowded.shape == (2,) and area.shape == (2,)
    assert registry.load_detection_dataset(str(root)).label_names == ('dog', 'cat')
    with pytest.raises(ValueError, match=r"\['dog'\]"):
        registry.load_detection_dataset(str(root), ('cat', 'bird'))


def test_dataset_errors(tmp_path):
    with pytest.raises(ValueError, match='dataset'):
        registry.load_detection_dataset(str(tmp_path / 'absent'))
    (tmp_path / 'annotations').mkdir()
    with pytest.raises(ValueError, match='COCO-layout'):
        registry.load_detection_dataset(str(tmp_path))


@pytest.fixture
def mirror(shared_data, monkeypatch, tmp_path):
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(shared_data / 'weights'))
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    return shared_data


def test_script_on_a_voc_folder_with_real_weights(script, mirror, tmp_path, capsys):
    root = _voc_folder(tmp_path / 'voc', {'dog': (mirror / 'images' / 'dog.jpg', DOG_OBJECTS)})
    report = script.main(['--model', 'yolo_fastest_xl', '--pretrained-model', 'voc',
                          '--dataset', str(root), '--batchsize', '1'])
    for name in ('bicycle', 'car', 'dog'):
        assert report[f'ap/{name}'] == 1.0, name
    assert numpy.isnan(report['ap/cat'])
    assert report['map'] == 1.0
    out = capsys.readouterr().out
    assert 'all-point' in out and 'mAP' in out and '100.00' in out
    assert 'reported: map_voc07 69.43' in out


def test_script_on_a_coco_folder_with_real_weights(script, mirror, tmp_path, capsys):
    root = tmp_path / 'coco'
    (root / 'annotations').mkdir(parents=True)
    (root / 'val').mkdir()
    shutil.copy(mirror / 'images' / 'dog.jpg', root / 'val' / 'dog.jpg')
    # a folder of its own: three categories, ids in another order than the model's labels
    categories = [{'id': 7, 'name': 'dog'}, {'id': 2, 'name': 'car'},
                  {'id': 4, 'name': 'bicycle'}]
    ids = {'dog': 7, 'car': 2, 'bicycle': 4}
    annotations = [
        {'id': k + 1, 'image_id': 1, 'category_id': ids[name], 'iscrowd': 0,
         'bbox': [x0, y0, x1 - x0, y1 - y0], 'area': float((x1 - x0) * (y1 - y0))}
        for k, (name, (x0, y0, x1, y1), _) in enumerate(DOG_OBJECTS[:3])]
    (root / 'annotations' / 'instances_val.json').write_text(json.dumps({
        'images': [{'id': 1, 'file_name': 'dog.jpg', 'width': 768, 'height': 576}],
        'annotations': annotations, 'categories': categories}))
    report = script.main(['--model', 'yolo_fastest', '--pretrained-model', 'coco',
                          '--dataset', str(root)])
    assert report['map/iou=0.50/area=all/max_dets=100'] > 0.9
    out = capsys.readouterr().out
    assert out.count('map/') + out.count('mar/') == 12
    assert 'map50_coco 24.40' in out
