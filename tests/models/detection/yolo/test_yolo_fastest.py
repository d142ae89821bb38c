"""Yolo-Fastest zoo entries, and the real weights on dog.jpg (skipped without shared data).

Reference detections (Darknet `detector test`, thresh 0.25, nms 0.45, dog.jpg 768x576),
from ../shared/data/README.md and darknet_facts.md: yolo-fastest-xl-voc gives car
0.997, bicycle 0.996, dog 0.95; yolo-fastest-voc gives bicycle, car, cat 0.359 and
dog 0.254. The boxes below are what cvzoo computes with the same preprocessing; the
scores carry the references' three digits.
"""

import numpy
import pytest

from cvzoo.models import get_model, zoo
from cvzoo.models.detection.yolo.yolo_fastest import YoloFastest, YoloFastestXL
from cvzoo.models.weights.trained_model import save_trained_model
from cvzoo.utils.image import read_image


@pytest.mark.parametrize('cls, key', [(YoloFastest, 'voc'), (YoloFastest, 'coco'),
                                      (YoloFastestXL, 'voc')], ids=['voc', 'coco', 'xl_voc'])
def test_entries_follow_the_schema(cls, key):
    entry = cls.weights[key]
    assert zoo.schema_problems(entry) == []
    assert [f.file_name.rsplit('.', 1)[1] for f in entry.all_files] == ['weights', 'cfg']
    assert entry.preset.resize_backend == 'darknet'


@pytest.fixture
def mirror(shared_data, monkeypatch, tmp_path):
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(shared_data / 'weights'))
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    return shared_data


def _by_name(model, result):
    bboxes, labels, scores = result
    return {model.label_names[label]: (score, bbox)
            for bbox, label, score in zip(bboxes[0], labels[0], scores[0])}


XL_DOG = {'car': (0.9967, [450.9, 78.8, 681.5, 173.2]),
          'bicycle': (0.9957, [114.2, 143.0, 603.9, 456.3]),
          'dog': (0.9495, [107.6, 234.6, 332.5, 532.3])}
VOC_DOG = {'bicycle': (0.9916, [152.5, 142.6, 564.4, 490.2]),
           'car': (0.9495, [447.4, 80.2, 675.0, 174.8]),
           'cat': (0.3588, [105.3, 196.3, 432.3, 532.2]),
           'dog': (0.2538, [100.2, 224.7, 340.8, 544.3])}


@pytest.mark.parametrize('name, expected, extra', [
    ('yolo_fastest_xl', XL_DOG, {'person'}), ('yolo_fastest', VOC_DOG, set()),
], ids=['xl', 'voc'])
def test_real_weights_find_dog_bicycle_car(mirror, name, expected, extra):
    model = get_model(name, pretrained_model='voc')
    found = _by_name(model, model.predict([read_image(mirror / 'images' / 'dog.jpg')]))
    assert set(found) == set(expected) | extra
    for label_name, (score, bbox) in expected.items():
        assert abs(found[label_name][0] - score) < 2e-3, label_name
        # NOTE: Darknet's own boxes; its VOC weights learned inclusive boxes, which
        # cvzoo's predict() returns with x_max, y_max + 1 (docs/conventions.md, "Data").
        numpy.testing.assert_allclose(found[label_name][1], numpy.add(bbox, [0, 0, 1, 1]),
                                      atol=0.5, err_msg=label_name)


def test_real_coco_weights(mirror):
    model = YoloFastest(pretrained_model='coco')
    assert model.n_fg_class == 80
    _, labels, scores = model.predict([str(mirror / 'images' / 'dog.jpg')])
    names = sorted(model.label_names[label] for label in labels[0])
    # darknet_facts.md: bicycle, car and dog, also cat, person and a second car
    assert set(names) == {'bicycle', 'car', 'cat', 'dog', 'person'}
    assert names.count('car') == 2
    assert abs(scores[0][0] - 0.8834) < 2e-3  # the best: the big car


def test_random_weights_from_the_cfg_and_new_classes(mirror, rng):
    model = YoloFastest(n_fg_class=3)
    assert model.n_fg_class == 3 and model.label_names is None
    assert model.network.heads[0]['n_class'] == 3
    pretrained = YoloFastest(pretrained_model='voc', n_fg_class=3)
    assert pretrained.network.layer0.conv.W.array.std() > 0
    bboxes, labels, _ = pretrained.predict([rng.uniform(0, 255, (3, 50, 70))
                                           .astype(numpy.float32)])
    assert (labels[0] < 3).all() and bboxes[0].shape[1] == 4


@pytest.mark.parametrize('box_convention', ['inclusive', 'continuous'])
def test_trained_file_keeps_its_names_and_box_convention(mirror, tmp_path, box_convention):
    model = YoloFastest(n_fg_class=3)
    model.label_names = ('a', 'b', 'c')
    model.box_convention = box_convention
    path = str(tmp_path / 'model_final.npz')
    save_trained_model(model, path, 'yolo_fastest', n_fg_class=3)
    for loaded in (get_model('yolo_fastest', pretrained_model=path),
                   YoloFastest(n_fg_class=3, pretrained_model=path)):
        assert loaded.box_convention == box_convention
        assert loaded.n_fg_class == 3
    assert get_model('yolo_fastest', pretrained_model=path).label_names == ('a', 'b', 'c')
