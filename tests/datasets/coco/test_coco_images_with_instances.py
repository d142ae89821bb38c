"""images_with_instances: the images with no annotation, or only crowd regions, go."""

from cvzoo.datasets.coco.coco_images_with_instances import images_with_instances
from cvzoo.datasets.coco.coco_instance_segmentation_dataset import (
    COCOInstanceSegmentationDataset,
)
from cvzoo.testing import synthetic_data


def _shapes(root, unannotated=0):
    """The json of two images of shapes and ``unannotated`` more (the first with a crowd
    region alone)."""
    synthetic_data.write_coco(root, synthetic_data.shape_scenes(2, 32), kind='instances',
                              unannotated=unannotated)
    return root / 'annotations' / 'instances_train.json'


def test_unannotated_and_crowd_only_images_are_left_out(tmp_path):
    json_path = _shapes(tmp_path, unannotated=2)
    dataset = COCOInstanceSegmentationDataset.from_json(json_path, tmp_path / 'train',
                                                        use_crowded=True, return_crowded=True)
    assert len(dataset) == 4 and dataset[2][3].tolist() == [True]
    kept = images_with_instances(dataset)
    assert len(kept) == 2
    for i in range(2):
        assert (kept[i][1] == dataset[i][1]).all() and len(kept[i][2]) >= 1


def test_a_dataset_with_every_image_annotated_is_returned_as_it_is(tmp_path):
    json_path = _shapes(tmp_path)
    dataset = COCOInstanceSegmentationDataset.from_json(json_path, tmp_path / 'train')
    assert images_with_instances(dataset) is dataset
