"""load_training_data: every format written by the generators reads back as written, in
the task's target layout, and the validation set is chosen as documented."""

import shutil

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets.formats import FORMATS, load_training_data
from cvzoo.testing import synthetic_data

SIZE = 40
N_TRAIN, N_VAL = 5, 2


def _img(array):
    """An (H, W, 3) uint8 image as the datasets give it: (3, H, W) float32."""
    return array.transpose(2, 0, 1).astype(numpy.float32)


def _index(dataset, k):
    """The index of the written example that example k of ``dataset`` was read from."""
    return int(dataset.img_paths[k].stem)


def _check_image(img, written, lossy=False):
    assert img.dtype == numpy.float32 and img.shape == (3, SIZE, SIZE)
    if lossy:  # JPEG keeps the 4x4 blocks' means, not the noise
        blocks = (img - _img(written)).reshape(3, SIZE // 4, 4, SIZE // 4, 4).mean(axis=(2, 4))
        assert numpy.abs(blocks).mean() < 3
    else:
        numpy.testing.assert_array_equal(img, _img(written))


def _check_class_folders(data, examples):
    assert data.label_names == tuple(sorted(synthetic_data.TEXTURE_NAMES))
    for k in range(len(data.train)):
        img, label = data.train[k]
        written_img, written_label = examples[_index(data.train, k)]
        _check_image(img, written_img)
        assert label.dtype == numpy.int32 and label.shape == ()
        assert data.label_names[label] == synthetic_data.TEXTURE_NAMES[written_label]


def _check_boxes(data, scenes, lossy=False, atol=0.0):
    assert data.label_names == synthetic_data.SHAPE_NAMES
    for k in range(len(data.train)):
        img, bbox, label = data.train[k]
        scene = scenes[k]
        _check_image(img, scene.img, lossy)
        assert bbox.dtype == numpy.float32 and label.dtype == numpy.int32
        numpy.testing.assert_allclose(bbox, scene.bbox, atol=atol)
        numpy.testing.assert_array_equal(label, scene.label)


def _check_segmentation(data, examples):
    assert data.label_names == synthetic_data.REGION_NAMES
    for k in range(len(data.train)):
        img, label = data.train[k]
        written_img, written_label = examples[k]
        _check_image(img, written_img)
        assert label.dtype == numpy.int32 and label.shape == (SIZE, SIZE)
        expected = numpy.where(written_label == 255, -1, written_label.astype(numpy.int32))
        numpy.testing.assert_array_equal(label, expected)
        assert (label == -1).any()


def _check_instances(data, scenes):
    for k in range(len(data.train)):
        img, mask, label = data.train[k]
        _check_image(img, scenes[k].img)
        assert mask.dtype == bool and mask.shape == (len(label), SIZE, SIZE)
        numpy.testing.assert_array_equal(mask, scenes[k].mask)
        numpy.testing.assert_array_equal(label, scenes[k].label)


def _check_keypoints(data, scenes):
    assert data.label_names == ('shape',) and data.point_names == synthetic_data.POINT_NAMES
    for k in range(len(data.train)):
        img, point, visible, label, bbox = data.train[k]
        R, K = len(scenes[k].label), len(synthetic_data.POINT_NAMES)
        _check_image(img, scenes[k].img)
        assert point.dtype == numpy.float32 and point.shape == (R, K, 2)
        assert visible.dtype == bool and visible.shape == (R, K) and visible.all()
        assert label.dtype == numpy.int32 and (label == 0).all()
        numpy.testing.assert_allclose(point, scenes[k].point)
        numpy.testing.assert_allclose(bbox, scenes[k].bbox)


def _check(format, data, examples, masks):
    if format == 'class_folders':
        _check_class_folders(data, examples)
    elif format == 'voc':
        _check_boxes(data, examples, lossy=True)
    elif format == 'coco':
        _check_boxes(data, examples)
    elif format == 'yolo':
        _check_boxes(data, examples, atol=1e-3)  # six decimals of the normalised box
    elif format == 'segmentation_folders':
        _check_segmentation(data, examples)
    elif format == 'coco_instances':
        _check_instances(data, examples)
    else:
        _check_keypoints(data, examples)


ROUND_TRIPS = [(f, 'polygon') for f in FORMATS] + [
    ('coco_instances', 'rle'), ('coco_instances', 'rle_counts'), ('coco_instances', 'mixed'),
    ('coco_keypoints', 'rle')]
TASKS = {'class_folders': 'classification', 'voc': 'detection', 'coco': 'detection',
         'yolo': 'detection', 'segmentation_folders': 'semantic_segmentation',
         'coco_instances': 'instance_segmentation', 'coco_keypoints': 'keypoint_detection'}


@pytest.mark.parametrize('format, masks', ROUND_TRIPS, ids=lambda x: str(x))
def test_each_format_reads_back_as_written(format, masks, tmp_path):
    options = {'masks': masks} if format.startswith('coco_') else {}
    root = synthetic_data.make_dataset(format, tmp_path / 'data', N_TRAIN, N_VAL, SIZE,
                                       seed=4, **options)
    data = load_training_data(root)
    assert (data.format, data.task) == (format, TASKS[format])
    assert (len(data.train), len(data.val)) == (N_TRAIN, N_VAL)
    examples = synthetic_data.examples_for(format, N_TRAIN + N_VAL, SIZE, seed=4)
    _check(format, data, examples[:N_TRAIN], masks)
    assert len(data.val[0]) == len(data.train[0])


def test_the_model_registry_knows_the_same_tasks():
    from cvzoo.datasets.formats import TASKS as FORMAT_TASK_NAMES
    from cvzoo.models.registry import TASKS as MODEL_TASKS

    assert FORMAT_TASK_NAMES == MODEL_TASKS and set(TASKS.values()) == set(MODEL_TASKS)


@pytest.mark.parametrize('format', FORMATS)
def test_without_a_split_a_seeded_fraction_is_held_out(format, tmp_path):
    root = synthetic_data.make_dataset(format, tmp_path / 'data', 10, 0, 32, seed=1)
    data = load_training_data(root, val_fraction=0.3, seed=7)
    assert (len(data.train), len(data.val)) == (7, 3)
    again = load_training_data(root, val_fraction=0.3, seed=7)
    other = load_training_data(root, val_fraction=0.3, seed=8)
    first = [data.val[k][0].sum() for k in range(3)]
    assert first == [again.val[k][0].sum() for k in range(3)]
    assert first != [other.val[k][0].sum() for k in range(3)]
    seen = {float(data.train[k][0].sum()) for k in range(7)}
    assert not seen & set(map(float, first))  # held out: not trained on
    assert load_training_data(root, val_fraction=0).val is None


def test_held_out_needs_a_training_example_left(tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'data', 1, 0, 32)
    with pytest.raises(errors.UsageError, match='too few'):
        load_training_data(root)
    assert len(load_training_data(root, val_fraction=0).train) == 1


@pytest.mark.parametrize('fraction', [-0.1, 1, 1.5, float('nan'), '0.2'])
def test_bad_val_fraction_is_refused(fraction, tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'data', 2, 0, 32)
    with pytest.raises(errors.UsageError, match='val_fraction'):
        load_training_data(root, val_fraction=fraction)


@pytest.mark.parametrize('format', ['class_folders', 'voc', 'yolo', 'coco',
                                    'segmentation_folders', 'coco_keypoints'])
def test_val_path_of_the_same_format(format, tmp_path):
    root = synthetic_data.make_dataset(format, tmp_path / 'train', 4, 2, 32, seed=1)
    other = synthetic_data.make_dataset(format, tmp_path / 'other', 3, 0, 32, seed=2)
    data = load_training_data(root, val=other)
    assert (len(data.train), len(data.val)) == (4, 3)  # all of it: it has no split
    data = load_training_data(other, val=root, val_fraction=0)
    assert (len(data.train), len(data.val)) == (3, 2)  # its own validation split


def test_val_classes_are_matched_by_name(tmp_path):
    """A validation folder per class holding fewer classes keeps the training labels."""
    examples = synthetic_data.texture_images(8, 32)
    root = synthetic_data.write_class_folders(tmp_path / 'train', examples)
    dots = [e for e in examples if synthetic_data.TEXTURE_NAMES[e[1]] == 'dots']
    val_root = synthetic_data.write_class_folders(tmp_path / 'val', dots)
    for name in synthetic_data.TEXTURE_NAMES:
        if name != 'dots':
            shutil.rmtree(val_root / name, ignore_errors=True)
    data = load_training_data(root, val=val_root)
    assert {data.label_names[int(data.val[k][1])] for k in range(len(data.val))} == {'dots'}


def test_val_with_unknown_classes_is_refused(tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'train', 3, 0, 32)
    other = synthetic_data.write_yolo(tmp_path / 'other', synthetic_data.shape_scenes(2, 32),
                                      label_names=('circle', 'square', 'hexagon'))
    with pytest.raises(errors.UsageError, match='hexagon'):
        load_training_data(root, val=other)


def test_val_of_another_format_is_refused(tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'train', 3, 0, 32)
    with pytest.raises(errors.MissingFileError, match='val: .*none does not exist'):
        load_training_data(root, val=tmp_path / 'none')
    other = synthetic_data.make_dataset('voc', tmp_path / 'other', 3, 0, 32)
    with pytest.raises(errors.UsageError, match='voc'):
        load_training_data(root, val=other)


def test_task_reads_coco_masks_as_boxes(tmp_path):
    root = synthetic_data.make_dataset('coco_instances', tmp_path / 'data', 3, 1, 32)
    data = load_training_data(root, task='detection')
    assert (data.format, data.task) == ('coco', 'detection') and len(data.train[0]) == 3
    with pytest.raises(errors.UsageError, match='keypoints'):
        load_training_data(root, task='keypoint_detection')


def test_task_the_format_cannot_train_is_refused(tmp_path):
    root = synthetic_data.make_dataset('voc', tmp_path / 'data', 3, 1, 32)
    with pytest.raises(errors.UsageError, match="cannot train 'classification'"):
        load_training_data(root, task='classification')
    with pytest.raises(errors.UsageError, match='task'):
        load_training_data(root, task='captioning')
    with pytest.raises(errors.UsageError, match='format'):
        load_training_data(root, format='pascal')


def test_explicit_format_skips_detection(tmp_path):
    root = synthetic_data.make_dataset('coco_keypoints', tmp_path / 'data', 3, 1, 32)
    data = load_training_data(root, format='coco')
    assert data.task == 'detection' and len(data.train[0]) == 3
    with pytest.raises(errors.MissingFileError, match='does not exist'):
        load_training_data(tmp_path / 'none', format='coco')
