"""The 1000 ImageNet-1k classes in the standard (sorted wnid) order."""

import pathlib

_SYNSET_FILE = pathlib.Path(__file__).resolve().parents[1] / 'data' / 'imagenet_synset_words.txt'


def _read_synsets():
    wnids, names = [], []
    with open(_SYNSET_FILE) as f:
        for line in f:
            wnid, _, words = line.strip().partition(' ')
            wnids.append(wnid)
            names.append(words.split(',')[0].strip())
    return tuple(wnids), tuple(names)


# label k: imagenet_wnids[k] (e.g. 'n01440764') and its first name ('tench')
imagenet_wnids, imagenet_label_names = _read_synsets()
