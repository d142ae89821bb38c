"""COCO's 17 person keypoints and the skeleton that joins them (0-based indexes).

The names and their order are those of the ``keypoints`` list of the person category in
COCO's person_keypoints_*.json (torchvision names the outputs of its Keypoint R-CNN the
same way). The json writes the skeleton with 1-based keypoint numbers; here each pair
has had 1 taken off, so ``coco_keypoint_names[i]`` and ``point[:, i]`` agree.
"""

coco_keypoint_names = (
    'nose',
    'left_eye', 'right_eye',
    'left_ear', 'right_ear',
    'left_shoulder', 'right_shoulder',
    'left_elbow', 'right_elbow',
    'left_wrist', 'right_wrist',
    'left_hip', 'right_hip',
    'left_knee', 'right_knee',
    'left_ankle', 'right_ankle',
)

# (i, j): a limb from keypoint i to keypoint j, in the json's order.
coco_point_skeleton = (
    (15, 13), (13, 11), (16, 14), (14, 12), (11, 12),
    (5, 11), (6, 12), (5, 6), (5, 7), (6, 8), (7, 9), (8, 10),
    (1, 2), (0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6),
)
