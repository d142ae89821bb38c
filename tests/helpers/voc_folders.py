"""Small VOC-layout folders written by the tests (tests/datasets, tests/faults)."""

import numpy
from PIL import Image

XML = """<annotation><size><width>{W}</width><height>{H}</height><depth>3</depth></size>
{objects}</annotation>"""
OBJECT = """<object><name>{name}</name><difficult>{difficult}</difficult>
<bndbox><xmin>{box[0]}</xmin><ymin>{box[1]}</ymin><xmax>{box[2]}</xmax><ymax>{box[3]}</ymax>
</bndbox></object>"""


def write_voc(root, annotations, size=(20, 30), split='trainval'):
    """Write a VOC folder under ``root`` and return ``root``.

    Args:
        root (pathlib.Path): the folder (made with its Annotations, JPEGImages and
            ImageSets/Main).
        annotations (dict): image name -> list of ``(class name, difficult 0/1, (xmin,
            ymin, xmax, ymax))`` in VOC's 1-based inclusive pixels; each image is a grey
            JPEG of ``size``.
        size (tuple): every image's (H, W).
        split (str): the ImageSets/Main list that names the images.
    """
    for folder in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (root / folder).mkdir(parents=True, exist_ok=True)
    H, W = size
    for name, objects in annotations.items():
        Image.fromarray(numpy.full((H, W, 3), 100, numpy.uint8)).save(
            root / 'JPEGImages' / f'{name}.jpg')
        text = ''.join(OBJECT.format(name=n, difficult=d, box=b) for n, d, b in objects)
        (root / 'Annotations' / f'{name}.xml').write_text(XML.format(W=W, H=H, objects=text))
    (root / 'ImageSets' / 'Main' / f'{split}.txt').write_text('\n'.join(annotations) + '\n')
    return root
