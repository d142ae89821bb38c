"""PlotReport: draw curves of reported values to a PNG file (with Pillow only)."""

import math
import os

from cvzoo.core.serializers import atomic_write
from cvzoo.core.training import extension, json_state, reporter, triggers

_COLORS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127))
_MARGINS = (70, 20, 20, 45)  # left, top, right, bottom, in pixels
_N_TICKS = 5


def nice_ticks(low, high, n_ticks=_N_TICKS):
    """Round tick positions whose range covers [low, high] (steps of 1, 2 or 5 times a power of ten).

    >>> nice_ticks(0.0, 1.0)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    """
    if high <= low:
        high = low + 1.0
    raw = (high - low) / n_ticks
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(f * power for f in (1, 2, 5, 10) if f * power >= raw)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


class PlotReport(extension.Extension):
    """Average ``y_keys`` over each ``trigger`` period and plot them against ``x_key``.

    The figure (axes, ticks, grid and a legend) is redrawn to ``trainer.out/filename``
    each time the trigger fires, written under a temporary name and renamed.

    Args:
        y_keys (str or sequence of str): the observation keys to plot.
        x_key (str): ``'iteration'`` or ``'epoch'``.
        trigger: ``(period, unit)``; when a point is added.
        filename (str): the PNG file in ``trainer.out``.
        size ((int, int)): the image's (width, height) in pixels.

    Attributes:
        data (dict): ``{key: [[x, y], ...]}``, the points plotted (kept in snapshots).
    """

    name = 'PlotReport'
    trigger = (1, 'iteration')

    def __init__(self, y_keys, x_key='iteration', trigger=(1, 'epoch'), filename='plot.png',
                 size=(640, 480)):
        if x_key not in ('iteration', 'epoch'):
            raise ValueError(f"x_key: expected 'iteration' or 'epoch', got {x_key!r}")
        self._y_keys = (y_keys,) if isinstance(y_keys, str) else tuple(y_keys)
        self._x_key = x_key
        self._trigger = triggers.get_trigger(trigger)
        self._filename = filename
        self._size = tuple(size)
        self._summary = reporter.DictSummary()
        self.data = {key: [] for key in self._y_keys}

    def __call__(self, trainer):
        self._summary.add({k: v for k, v in trainer.observation.items() if k in self._y_keys})
        if not self._trigger(trainer):
            return
        x = getattr(trainer.updater, self._x_key)
        for key, mean in self._summary.compute_mean().items():
            self.data[key].append([x, mean])
        self._summary = reporter.DictSummary()
        path = os.path.join(trainer.out, self._filename)
        with atomic_write.atomic_write(path) as tmp_path:
            self.draw().save(tmp_path, format='PNG')

    def draw(self):
        """Return the figure as a PIL image."""
        from PIL import Image, ImageDraw, ImageFont  # here: importing the zoo loads no Pillow

        img = Image.new('RGB', self._size, 'white')
        draw = ImageDraw.Draw(img)
        font = ImageFont.load_default()
        points = [p for series in self.data.values() for p in series if math.isfinite(p[1])]
        xs, ys = [p[0] for p in points] or [0, 1], [p[1] for p in points] or [0, 1]
        x_ticks, y_ticks = nice_ticks(min(xs), max(xs)), nice_ticks(min(ys), max(ys))
        box = (_MARGINS[0], _MARGINS[1], self._size[0] - _MARGINS[2],
               self._size[1] - _MARGINS[3])
        to_pixel = _Mapping(box, (x_ticks[0], x_ticks[-1]), (y_ticks[0], y_ticks[-1]))
        _draw_axes(draw, font, box, to_pixel, x_ticks, y_ticks, self._x_key)
        for k, (key, series) in enumerate(self.data.items()):
            color = _COLORS[k % len(_COLORS)]
            pixels = [to_pixel(x, y) for x, y in series if math.isfinite(y)]
            if len(pixels) > 1:
                draw.line(pixels, fill=color, width=2)
            for px, py in pixels:
                draw.ellipse((px - 2, py - 2, px + 2, py + 2), fill=color)
            _draw_legend_row(draw, font, box, k, key, color)
        return img

    def serialize(self, serializer):
        """Save or load the plotted points and the running summary."""
        if hasattr(self._trigger, 'serialize'):
            self._trigger.serialize(serializer['_trigger'])
        self._summary.serialize(serializer['_summary'])
        self.data = json_state.serialize_json(serializer, '_data', self.data)


class _Mapping:
    """Data coordinates -> pixel coordinates inside ``box``."""

    def __init__(self, box, x_range, y_range):
        self.box, self.x_range, self.y_range = box, x_range, y_range

    def __call__(self, x, y):
        (left, top, right, bottom), (x0, x1), (y0, y1) = self.box, self.x_range, self.y_range
        px = left + (x - x0) / ((x1 - x0) or 1.0) * (right - left)
        py = bottom - (y - y0) / ((y1 - y0) or 1.0) * (bottom - top)
        return px, py


def _draw_axes(draw, font, box, to_pixel, x_ticks, y_ticks, x_label):
    left, top, right, bottom = box
    for x in x_ticks:
        px, _ = to_pixel(x, y_ticks[0])
        draw.line((px, top, px, bottom), fill=(230, 230, 230))
        draw.line((px, bottom, px, bottom + 5), fill='black')
        draw.text((px, bottom + 8), f'{x:g}', fill='black', font=font, anchor='mt')
    for y in y_ticks:
        _, py = to_pixel(x_ticks[0], y)
        draw.line((left, py, right, py), fill=(230, 230, 230))
        draw.line((left - 5, py, left, py), fill='black')
        draw.text((left - 8, py), f'{y:.4g}', fill='black', font=font, anchor='rm')
    draw.rectangle(box, outline='black')
    draw.text(((left + right) / 2, bottom + 28), x_label, fill='black', font=font, anchor='mt')


def _draw_legend_row(draw, font, box, row, key, color):
    x, y = box[2] - 150, box[1] + 10 + 16 * row
    draw.line((x, y, x + 20, y), fill=color, width=2)
    draw.text((x + 26, y), key, fill='black', font=font, anchor='lm')
