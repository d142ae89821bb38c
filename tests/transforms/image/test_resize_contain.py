"""resize_contain: the largest aspect-keeping fit, centred, margins filled; boxes follow."""

import numpy
import pytest

from cvzoo.transforms import resize, resize_bbox, resize_contain, translate_bbox


@pytest.mark.parametrize('in_size, size, scaled_size, offsets', [
    ((10, 20), (30, 30), (15, 30), (7, 0)),
    ((20, 10), (30, 30), (30, 15), (0, 7)),
    ((10, 20), (5, 40), (5, 10), (0, 15)),
    ((8, 8), (4, 4), (4, 4), (0, 0)),
    ((6, 9), (6, 9), (6, 9), (0, 0)),
], ids=['wide_up', 'tall_up', 'limited_by_height', 'square_down', 'same_size'])
def test_size_offsets_and_content(rng, in_size, size, scaled_size, offsets):
    img = rng.uniform(0, 255, size=(3,) + in_size).astype(numpy.float32)
    out, param = resize_contain(img, size, fill=(1, 2, 3), return_param=True)
    assert out.shape == (3,) + size and out.dtype == numpy.float32
    assert param == {'y_offset': offsets[0], 'x_offset': offsets[1],
                     'scaled_size': scaled_size}
    y, x = offsets
    inside = out[:, y:y + scaled_size[0], x:x + scaled_size[1]]
    numpy.testing.assert_allclose(inside, resize(img, scaled_size), rtol=1e-6)
    margin = numpy.ones(size, bool)
    margin[y:y + scaled_size[0], x:x + scaled_size[1]] = False
    for channel, value in enumerate((1, 2, 3)):
        assert (out[channel][margin] == value).all()


def test_boxes_follow_and_scalar_fill():
    img = numpy.full((1, 10, 20), 7, numpy.float32)
    out, param = resize_contain(img, (40, 40), fill=-1, return_param=True)
    assert (out[:, :10] == -1).all() and (out[:, 10:30] == 7).all()
    bbox = numpy.array([[0, 0, 20, 10], [5, 2, 10, 4]], numpy.float32)
    bbox = resize_bbox(bbox, img.shape[1:], param['scaled_size'])
    bbox = translate_bbox(bbox, param['y_offset'], param['x_offset'])
    numpy.testing.assert_array_equal(bbox, [[0, 10, 40, 30], [10, 14, 20, 18]])


def test_bad_size_is_named():
    with pytest.raises(ValueError, match='size'):
        resize_contain(numpy.ones((1, 2, 2), numpy.float32), (0, 3))
