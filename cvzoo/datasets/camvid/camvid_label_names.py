"""The 11 CamVid classes of the SegNet tutorial and their colours."""

camvid_label_names = (
    'Sky', 'Building', 'Pole', 'Road', 'Pavement', 'Tree', 'SignSymbol', 'Fence', 'Car',
    'Pedestrian', 'Bicyclist')

camvid_label_colors = (
    (128, 128, 128), (128, 0, 0), (192, 192, 128), (128, 64, 128), (60, 40, 222),
    (128, 128, 0), (192, 128, 128), (64, 64, 128), (64, 0, 128), (64, 64, 0), (0, 128, 192))
