"""cvzoo.testing.synthetic_data: seeded, consistent and learnable toy data of each task."""

import json

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets.coco.coco_mask_decoding import polygons_to_mask
from cvzoo.testing import synthetic_data
from tests.helpers.scripts import load_script


def test_the_same_seed_gives_the_same_data():
    first, second = (synthetic_data.shape_scenes(3, 32, seed=5) for _ in range(2))
    other = synthetic_data.shape_scenes(3, 32, seed=6)
    assert all((a.img == b.img).all() and (a.bbox == b.bbox).all()
               for a, b in zip(first, second))
    assert any(a.img.shape != b.img.shape or (a.img != b.img).any()
               for a, b in zip(first, other))


@pytest.mark.parametrize('overlap', [True, False])
def test_shape_boxes_masks_and_points_agree(overlap):
    for scene in synthetic_data.shape_scenes(20, 48, seed=1, overlap=overlap):
        R = len(scene.label)
        assert scene.img.shape == (48, 48, 3) and scene.img.dtype == numpy.uint8
        assert scene.bbox.shape == (R, 4) and scene.mask.shape == (R, 48, 48)
        assert scene.point.shape == (R, len(synthetic_data.POINT_NAMES), 2)
        assert ((0 <= scene.bbox) & (scene.bbox <= 48)).all()
        for k in range(R):
            x0, y0, x1, y1 = scene.bbox[k]
            ys, xs = numpy.nonzero(scene.mask[k])
            assert (xs >= x0).all() and (xs < x1).all() and (ys >= y0).all() and (ys < y1).all()
            inside = (scene.point[k] >= [x0, y0]) & (scene.point[k] <= [x1, y1])
            assert inside.all()
            whole = polygons_to_mask([scene.polygons[k].ravel().tolist()], (48, 48))
            assert not (scene.mask[k] & ~whole).any()  # the visible part of the outline
        assert scene.mask.sum(axis=0).max() <= 1  # one shape a pixel
        if not overlap:
            assert all(polygons_to_mask([xy.ravel().tolist()], (48, 48)).sum() == m.sum()
                       for xy, m in zip(scene.polygons, scene.mask))


def test_shapes_are_drawn_where_their_masks_are():
    scene = synthetic_data.shape_scenes(1, 64, seed=3, max_objects=1)[0]
    inside = scene.img[scene.mask[0]].astype(float).mean(axis=0)
    outside = scene.img[~scene.mask[0]].astype(float).mean(axis=0)
    assert numpy.abs(inside - outside).sum() > 60  # colours differ by 80 to 175 a channel


def test_region_labels_and_ignored_border():
    for img, label in synthetic_data.region_scenes(10, 48, seed=2):
        assert img.shape == (48, 48, 3) and label.shape == (48, 48)
        assert set(numpy.unique(label)) <= {0, 1, 2, 3, 255}
        inner = label[1:-1, 1:-1]
        scored = inner != 255
        # a scored pixel's right and lower neighbours are of its class or ignored
        for right in (label[1:-1, 2:], label[2:, 1:-1]):
            assert ((right == inner) | (right == 255))[scored].all()


def _nearest_mean_accuracy(train, test, features):
    """Accuracy of the nearest class mean on ``features`` (a tiny learner)."""
    x = numpy.stack([features(img) for img, _ in train])
    y = numpy.array([label for _, label in train])
    means = numpy.stack([x[y == c].mean(axis=0) for c in numpy.unique(y)])
    hits = [numpy.argmin(((means - features(img)) ** 2).sum(axis=1)) == label
            for img, label in test]
    return float(numpy.mean(hits))


def _spectrum(img):
    grey = img.astype(float).mean(axis=2)
    power = numpy.abs(numpy.fft.fft2(grey - grey.mean()))
    rows, columns = power.sum(axis=1)[1:17], power.sum(axis=0)[1:17]
    return numpy.log1p(numpy.concatenate([rows, columns, [power[1:8, 1:8].sum()]]))


def test_textures_are_learnable():
    """A nearest-mean classifier of power spectra beats chance (0.25) by far."""
    examples = synthetic_data.texture_images(160, 32, seed=0)
    accuracy = _nearest_mean_accuracy(examples[:120], examples[120:], _spectrum)
    assert accuracy >= 0.6


def test_regions_are_learnable_from_colour():
    """A pixel's colour alone gives its class for most pixels (chance: about 0.25)."""
    scenes = synthetic_data.region_scenes(20, 32, seed=0)
    pixels = [(img[label != 255], label[label != 255]) for img, label in scenes]
    train = [(colour, label) for imgs, labels in pixels[:10] for colour, label in
             zip(imgs, labels)]
    test = [(colour, label) for imgs, labels in pixels[10:] for colour, label in
            zip(imgs, labels)]
    assert _nearest_mean_accuracy(train, test[::7], lambda c: c.astype(float)) >= 0.7


def test_size_below_the_minimum_is_refused():
    with pytest.raises(errors.UsageError, match='size'):
        synthetic_data.shape_scenes(1, 8)


def test_unknown_format_and_options_are_refused(tmp_path):
    with pytest.raises(errors.UsageError, match='format'):
        synthetic_data.make_dataset('pascal', tmp_path / 'x', 2)
    with pytest.raises(errors.UsageError, match='masks'):
        synthetic_data.make_dataset('coco_instances', tmp_path / 'x', 2, masks='bitmap')
    with pytest.raises(errors.UsageError, match="layout: .*'labelimg'"):
        synthetic_data.make_dataset('voc', tmp_path / 'x', 2, layout='labelimg')


def test_coco_category_ids_and_mixed_masks_read_back(tmp_path):
    """Ids 3, 1, 2 order the classes square, triangle, circle; circles and covered shapes
    are RLE runs, the others polygons, and every mask reads back as drawn."""
    from cvzoo.datasets.formats import load_training_data

    scenes = synthetic_data.shape_scenes(6, 32, seed=2)
    root = synthetic_data.write_coco(tmp_path, scenes, kind='instances', masks='mixed',
                                     category_ids=(3, 1, 2))
    document = json.loads((root / 'annotations' / 'instances_train.json').read_text())
    kinds = {type(entry['segmentation']) for entry in document['annotations']}
    assert kinds == {list, dict}
    data = load_training_data(root, val_fraction=0)
    assert data.label_names == ('square', 'triangle', 'circle')
    order = [2, 0, 1]  # a scene's label (circle, square, triangle) as read
    for scene, (_, mask, label) in zip(scenes, data.train):
        shown = scene.mask.any(axis=(1, 2))
        numpy.testing.assert_array_equal(mask, scene.mask[shown])
        assert label.tolist() == [order[k] for k in scene.label[shown]]


@pytest.mark.parametrize('kind', synthetic_data.COCO_KINDS)
def test_coco_unannotated_images_follow_the_scenes(kind, tmp_path):
    from cvzoo.datasets.coco.coco_keypoint_dataset import COCOKeypointDataset

    root = synthetic_data.write_coco(tmp_path, synthetic_data.shape_scenes(2, 32),
                                     synthetic_data.shape_scenes(1, 32, seed=1), kind=kind,
                                     unannotated=2)
    prefix = 'person_keypoints' if kind == 'keypoints' else 'instances'
    for split, n in (('train', 2), ('val', 1)):
        document = json.loads((root / 'annotations' / f'{prefix}_{split}.json').read_text())
        assert len(document['images']) == n + 2
        crowd = [entry for entry in document['annotations'] if entry['iscrowd']]
        assert [entry['image_id'] for entry in crowd] == [n + 1]
        assert not any(entry['image_id'] == n + 2 for entry in document['annotations'])
        assert len(list((root / split).iterdir())) == n + 2
    if kind == 'keypoints':
        dataset = COCOKeypointDataset.from_json(root / 'annotations' /
                                                'person_keypoints_train.json', root / 'train',
                                                use_crowded=True, return_crowded=True)
        assert [example[-1].tolist() for example in dataset][2:] == [[True], []]


@pytest.mark.parametrize('options, named', [
    ({'category_ids': (1, 2)}, 'category_ids'), ({'category_ids': (1, 1, 2)}, 'category_ids'),
    ({'category_ids': (1, 2, 3), 'kind': 'keypoints'}, 'category_ids'),
    ({'unannotated': -1}, 'unannotated')])
def test_bad_coco_options_are_refused(options, named, tmp_path):
    with pytest.raises(errors.UsageError, match=named):
        synthetic_data.write_coco(tmp_path, synthetic_data.shape_scenes(1, 32), **options)


def test_script_writes_each_format_through_the_module(tmp_path):
    from cvzoo.datasets.formats import FORMATS, detect_format

    script = load_script('make_shapes_dataset')
    for format in FORMATS:
        script.main(['--out', str(tmp_path / format), '--format', format, '--n-train', '3',
                     '--n-test', '1', '--size', '32'])
        assert detect_format(tmp_path / format) == format


@pytest.mark.parametrize('n_test, files', [(0, ['000000.jpg', '000000.xml', '000001.jpg',
                                                 '000001.xml']),
                                            (1, ['train', 'valid'])])
def test_script_writes_voc_xml_beside_the_images(n_test, files, tmp_path):
    from cvzoo.datasets.formats import detect_format

    load_script('make_shapes_dataset').main(['--out', str(tmp_path / 's'), '--layout', 'flat',
                                             '--n-train', '2', '--n-test', str(n_test),
                                             '--size', '32'])
    assert sorted(p.name for p in (tmp_path / 's').iterdir()) == files
    assert detect_format(tmp_path / 's') == 'voc'


def test_script_refuses_a_layout_for_another_format(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_script('make_shapes_dataset').main(['--out', str(tmp_path / 's'), '--format',
                                                 'yolo', '--layout', 'flat'])
    assert exit_info.value.code == 2 and '--layout' in capsys.readouterr().err
    assert not (tmp_path / 's').exists()


def test_script_refuses_masks_for_a_format_without_them(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_script('make_shapes_dataset').main(['--out', str(tmp_path / 's'), '--masks',
                                                 'rle'])
    assert exit_info.value.code == 2 and '--masks' in capsys.readouterr().err
    assert not (tmp_path / 's').exists()
