"""The train/test pair a detection training script reads."""

from cvzoo.datasets.concatenated_dataset import ConcatenatedDataset
from cvzoo.datasets.voc.voc_bbox_dataset import VOCBboxDataset


def voc_detection_splits(name):
    """Return (train, test, label_names) for a detection training run.

    Args:
        name (str): ``'voc07'`` (VOC2007 trainval / test), ``'voc07+12'`` (VOC2007+2012
            trainval / VOC2007 test), or the path of your own VOC-layout folder with
            ``ImageSets/Main/train.txt`` and ``test.txt`` (label names from its xml).

    Returns:
        tuple: the training set, the test set (with difficult flags) and the label names.
    """
    if name in ('voc07', 'voc07+12'):
        train = VOCBboxDataset(year='2007', split='trainval')
        if name == 'voc07+12':
            train = ConcatenatedDataset(train, VOCBboxDataset(year='2012', split='trainval'))
        test = VOCBboxDataset(year='2007', split='test', use_difficult=True,
                              return_difficult=True)
        return train, test, test.label_names
    train = VOCBboxDataset(name, split='train')
    test = VOCBboxDataset(name, split='test', use_difficult=True, return_difficult=True,
                          label_names=train.label_names)
    return train, test, train.label_names
