"""`cvzoo predict` of an instance segmenter (a fake one registered in the zoo): the
printed instances and the picture with masks, boxes, captions and a legend."""

import numpy
from PIL import Image

from cvzoo.cli import main, predict_output

from tests.helpers.fake_instance_segmenter import (NAME, fake_instance_segmenter,  # noqa: F401
                                                   flat_image)

LEVEL, SIZE = 40, (60, 80)


def _answers():
    masks = numpy.zeros((2,) + SIZE, bool)
    masks[0, 10:45, 5:40] = True
    masks[1, 25:55, 30:75] = True
    masks[1, 54, 74] = False
    return {LEVEL: (masks, numpy.array([1, 2], numpy.int32),
                    numpy.array([0.9, 0.8], numpy.float32))}


def test_printer_is_registered_for_the_task():
    assert predict_output.PRINTERS['instance_segmentation'] is (
        predict_output.instance_segmentation)


def test_predict_prints_instances_and_draws_masks_with_a_legend(
        fake_instance_segmenter, monkeypatch, tmp_path, capsys):  # noqa: F811
    answers = _answers()
    monkeypatch.setattr(fake_instance_segmenter, 'default_answers', answers)
    path = tmp_path / 'flat.png'
    Image.fromarray(flat_image(LEVEL, SIZE).transpose(1, 2, 0).astype(numpy.uint8)).save(path)
    out = tmp_path / 'masks.png'
    assert main.main(['predict', str(path), '--model', NAME, '--pretrained-model', 'coco',
                      '--out', str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f'{path}: 2 instances: score, label, box (x_min, y_min, x_max, y_max) '
                        'in pixels, mask area')
    assert lines[1].split() == ['0.900', 'dog', '(5.0,', '10.0,', '40.0,', '45.0)', '1225',
                                'pixels']
    assert lines[2].split() == ['0.800', 'person', '(30.0,', '25.0,', '75.0,', '55.0)',
                                '1349', 'pixels']
    assert lines[3] == f'wrote {out}'

    picture = numpy.asarray(Image.open(out).convert('RGB')).astype(int)
    assert picture.shape[0] >= SIZE[0] and picture.shape[1] > SIZE[1] + 20  # the legend
    red, green = numpy.array([128, 0, 0]), numpy.array([0, 128, 0])
    blend = numpy.rint(0.3 * LEVEL + 0.7 * numpy.stack([red, green])).astype(int)
    # pixels away from the captions (at each box's top left) and the box outlines
    assert picture[30, 15].tolist() == blend[0].tolist()    # only the dog
    assert picture[41, 35].tolist() == blend[0].tolist()    # both: the better score's
    assert picture[50, 60].tolist() == blend[1].tolist()    # only the person
    assert picture[2, 78].tolist() == [LEVEL] * 3           # no instance
    assert picture[44, 20].tolist() == red.tolist()         # the dog's box
    swatch = SIZE[1] + 8
    assert picture[6, swatch].tolist() == red.tolist()      # legend line 1
    assert picture[20, swatch].tolist() == green.tolist()   # legend line 2
