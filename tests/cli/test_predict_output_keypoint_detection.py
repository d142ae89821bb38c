"""`cvzoo predict` of a keypoint detector (a fake one registered as model 'x'): the printed
instances and the picture with boxes, keypoints and, for COCO's keypoints, the skeleton."""

import numpy
import pytest
from PIL import Image

from cvzoo.cli import main, model_card, predict_output
from cvzoo.datasets.coco.coco_keypoint_names import coco_keypoint_names
from cvzoo.models.weights import weights_schema
from cvzoo.utils import visualize
from tests.helpers import fake_cli_models

RED, GREEN = [128, 0, 0], [0, 128, 0]  # instance 0's points, label 1's box


@pytest.fixture
def image_path(tmp_path):
    return fake_cli_models.write_image(tmp_path)


def test_printer_is_registered_for_the_task():
    assert predict_output.PRINTERS['keypoint_detection'] is predict_output.keypoint_detection


def test_predict_prints_instances_and_draws_boxes_and_points(monkeypatch, capsys, tmp_path,
                                                             image_path):
    model = fake_cli_models.FakePersonKeypointDetector()
    fake_cli_models.register(monkeypatch, model, 'keypoint_detection')
    out = tmp_path / 'points.png'
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                      '--out', str(out), '--score-thresh', '0.25']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f'{image_path}: 1 instances: score, label, box (x_min, y_min, x_max, '
                        'y_max) in pixels, points scoring above 0')
    assert lines[1].split() == ['0.800', 'person', '(2.0,', '3.0,', '14.0,', '13.0)',
                                '2/3', 'points']
    assert lines[2] == f'wrote {out}' and len(lines) == 3
    assert model.thresholds == (0.25, 0.5)  # the visualize preset, then --score-thresh
    picture = numpy.asarray(Image.open(out).convert('RGB'))
    assert picture.shape == (16, 20, 3)
    assert picture[8, 2].tolist() == GREEN       # the box's left side
    assert picture[5, 4].tolist() == RED         # the first keypoint
    assert picture[6, 12].tolist() == RED        # the second
    # the third point scores below 0: not drawn (drawn, it would show); no limbs
    bbox, point = (answer[0] for answer in model.detect_points([None], None, None)[:2])
    boxes = visualize.vis_bbox(numpy.zeros((3, 16, 20)), bbox, numpy.array([1]),
                               numpy.array([0.8]), label_names=model.label_names)
    boxes = boxes.transpose(2, 0, 1)
    numpy.testing.assert_array_equal(picture, visualize.vis_point(
        boxes, point, numpy.array([[True, True, False]])))
    assert (picture != visualize.vis_point(boxes, point)).any()


def test_coco_keypoints_are_joined_by_the_skeleton(monkeypatch, capsys, tmp_path, image_path):
    model = fake_cli_models.FakePersonKeypointDetector()
    model.point_names = coco_keypoint_names
    answer = model.detect_points

    def seventeen_points(x, sizes, prepared):
        bboxes, points, point_scores, labels, scores = answer(x, sizes, prepared)
        point = numpy.zeros((1, 17, 2), numpy.float32)
        point[0, :2] = [[4, 5], [12, 5]]  # nose and left eye: a limb of COCO's skeleton
        score = numpy.full((1, 17), -1, numpy.float32)
        score[0, :2] = 1
        return bboxes, [point], [score], labels, scores

    monkeypatch.setattr(model, 'detect_points', seventeen_points)
    fake_cli_models.register(monkeypatch, model, 'keypoint_detection')
    out = tmp_path / 'points.png'
    assert main.main(['predict', image_path, '--model', 'x', '--pretrained-model', 'k',
                      '--out', str(out)]) == 0
    assert '2/17 points' in capsys.readouterr().out
    picture = numpy.asarray(Image.open(out).convert('RGB'))
    assert picture[5, 8].tolist() == RED  # on the limb


def test_model_card_reproduces_with_the_keypoint_evaluation():
    card = model_card.model_card('keypointrcnn_resnet50_fpn')
    assert ('reproduce: python scripts/eval_keypoint_detection.py --model '
            'keypointrcnn_resnet50_fpn --pretrained-model coco --dataset coco-val2017') in card
    score = weights_schema.Score('keypoint_map_coco', 0.5, 'coco_val2017', 'a test')
    assert model_card.eval_command('x', 'k', score, 'pose_tracking').startswith('none here')
