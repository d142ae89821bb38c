import numpy
import pytest
from PIL import Image

from cvzoo.datasets.voc.voc_detection_splits import voc_detection_splits

XML = ('<annotation><size><width>20</width><height>10</height><depth>3</depth></size>'
       '<object><name>{name}</name><difficult>0</difficult><bndbox><xmin>2</xmin>'
       '<ymin>2</ymin><xmax>9</xmax><ymax>8</ymax></bndbox></object></annotation>')


def _folder(root, splits):
    for sub in ('JPEGImages', 'Annotations', 'ImageSets/Main'):
        (root / sub).mkdir(parents=True)
    for split, items in splits.items():
        (root / 'ImageSets' / 'Main' / f'{split}.txt').write_text(
            '\n'.join(id_ for id_, _ in items) + '\n')
        for id_, name in items:
            Image.fromarray(numpy.zeros((10, 20, 3), numpy.uint8)).save(
                root / 'JPEGImages' / f'{id_}.jpg')
            (root / 'Annotations' / f'{id_}.xml').write_text(XML.format(name=name))


def test_own_folder_gives_train_test_and_its_names(tmp_path):
    _folder(tmp_path, {'train': [('a', 'circle'), ('b', 'square')], 'test': [('c', 'square')]})
    train, test, label_names = voc_detection_splits(str(tmp_path))
    assert len(train) == 2 and len(test) == 1
    assert tuple(label_names) == ('circle', 'square')
    img, bbox, label, difficult = test[0]
    assert int(label[0]) == 1 and not difficult[0]


def test_missing_split_file_is_named(tmp_path):
    _folder(tmp_path, {'train': [('a', 'circle')]})
    with pytest.raises((FileNotFoundError, ValueError), match='test'):
        voc_detection_splits(str(tmp_path))
