"""cvzoo.models.segmentation.evaluate (reported scores, table) and the segmentation datasets
of cvzoo.datasets.registry."""

import numpy
import pytest

from cvzoo.datasets import registry
from cvzoo.models.segmentation import evaluate
from cvzoo.utils import image


def test_folder_dataset_with_ignore_label_and_limit(tmp_path, rng):
    for sub in ('images', 'labels'):
        (tmp_path / sub).mkdir()
    for i in range(3):
        image.write_image(rng.uniform(0, 255, (3, 4, 5)), tmp_path / 'images' / f'{i}.jpg')
        image.write_image(numpy.full((1, 4, 5), 255 if i == 1 else 2), tmp_path / 'labels' /
                          f'{i}.png')
    data = registry.load_semantic_segmentation_dataset(str(tmp_path), ignore_label=255, limit=2)
    assert len(data.dataset) == 2 and data.label_names is None
    img, label = data.dataset[1]
    assert img.shape == (3, 4, 5) and label.dtype == numpy.int32 and (label == -1).all()


def test_unknown_dataset_is_refused(tmp_path):
    with pytest.raises(ValueError, match='dataset'):
        registry.load_semantic_segmentation_dataset(str(tmp_path / 'nowhere'))


def test_camvid_split(shared_data):
    data = registry.load_semantic_segmentation_dataset('camvid-test', shared_data / 'camvid',
                                                       limit=3)
    assert len(data.dataset) == 3 and len(data.label_names) == 11


def test_reported_scores_of_espnet():
    assert evaluate.reported_scores('espnet', 'camvid') == {
        'miou': 0.5564, 'mean_class_accuracy': 0.6830}
    assert evaluate.reported_scores('espnet', '/some/file.npz') == {}


def test_format_report():
    report = {'miou': 0.5, 'pixel_accuracy': 0.75, 'mean_class_accuracy': float('nan'),
              'iou/a': 0.25, 'class_accuracy/a': 0.125, 'iou/b': float('nan')}
    text = evaluate.format_report(report, ['a', 'b'], {'miou': 0.5564})
    lines = text.splitlines()
    assert lines[1].split() == ['a', '25.00', '12.50']
    assert lines[2].split() == ['b', 'n/a', 'n/a']
    assert lines[3].split() == ['mIoU', '50.00', '(reported', '55.64)']
    assert lines[5].split()[-1] == 'n/a'
