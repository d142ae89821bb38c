"""Files shipped inside the package, so that the default detector runs with no network.

The folder holds the two files of the zoo entry :data:`SHIPPED_WEIGHTS`
(Yolo-Fastest-XL VOC: ``yolo-fastest-xl-voc.cfg`` and ``.weights``) and Darknet's sample
picture ``dog.jpg`` (a dog, a bicycle and a car); ``README.md`` beside them gives their
origin and licence. The entry's files are served from here before
``$CVZOO_WEIGHTS_MIRROR`` or their URL, once they match the entry's sha256
(:func:`cvzoo.models.weights.weight_files.fetch_weights`).

>>> os.path.basename(sample_image_path())
'dog.jpg'
>>> os.path.dirname(shipped_path('yolo-fastest-xl-voc.cfg')) == EMBEDDED_DIR
True
"""

import os

from cvzoo import errors

EMBEDDED_DIR = os.path.dirname(os.path.abspath(__file__))
SAMPLE_IMAGE_NAME = 'dog.jpg'
# (model, weights key) of the zoo entry whose files are shipped here, under the file
# names the entry gives them; `cvzoo predict` runs it when no --model is given.
SHIPPED_WEIGHTS = ('yolo_fastest_xl', 'voc')


def sample_image_path() -> str:
    """The path of the sample picture shipped with cvzoo: Darknet's ``dog.jpg`` (768x576,
    a dog, a bicycle and a car), on which ``cvzoo predict`` runs when given no image.

    Raises:
        cvzoo.errors.CorruptFileError: the installation lacks the file.
    """
    return shipped_path(SAMPLE_IMAGE_NAME)


def shipped_path(file_name: str) -> str:
    """The path of a file shipped in this folder (not checked against any hash).

    Args:
        file_name (str): its name, e.g. a ``WeightFile.file_name`` of
            :data:`SHIPPED_WEIGHTS`.

    Raises:
        cvzoo.errors.CorruptFileError: the installation lacks the file.
    """
    path = os.path.join(EMBEDDED_DIR, file_name)
    if not os.path.isfile(path):
        raise errors.CorruptFileError(f'{path}: missing from the cvzoo installation (a file '
                                      'shipped with the package); reinstall cvzoo')
    return path
