import numpy
from PIL import Image

from cvzoo.core.training.extensions.plot_report import PlotReport, nice_ticks


def test_writes_a_png_of_the_right_size(make_trainer, tmp_path):
    trainer = make_trainer(stop=(6, 'iteration'))
    trainer.extend(PlotReport(['main/loss', 'main/accuracy'], trigger=(2, 'iteration'),
                              size=(320, 200)))
    trainer.run()
    with Image.open(tmp_path / 'plot.png') as img:
        assert img.format == 'PNG' and img.size == (320, 200)
        pixels = numpy.asarray(img.convert('RGB'))
    # both curves' colours are drawn
    assert ((pixels == (31, 119, 180)).all(axis=-1)).sum() > 20
    assert ((pixels == (255, 127, 14)).all(axis=-1)).sum() > 20
    data = trainer.get_extension('PlotReport').data
    assert [x for x, _ in data['main/loss']] == [2, 4, 6]


def test_ticks_cover_the_range():
    for low, high in [(0, 9), (0.03, 0.97), (-2.3, 7.1), (5, 5), (1e-4, 3e-4)]:
        ticks = nice_ticks(low, high)
        assert ticks[0] <= low and ticks[-1] >= high and 3 <= len(ticks) <= 12
