"""The smallest Darknet cfgs the detection scripts' tests train and evaluate."""

# a stride-2 convolution and a 1x1 one of 2 anchors x (5 + 2 classes) outputs
TINY_BODY = """[net]
width=32
height=32
channels=3
[convolutional]
filters=8
size=3
stride=2
pad=1
batch_normalize=1
activation=leaky
[convolutional]
filters=14
size=1
stride=1
activation=linear
"""

# the body with a YOLOv3 head of two anchors and two classes
TINY_YOLO_CFG = TINY_BODY + """[yolo]
mask=0,1
anchors=8,8, 16,24
classes=2
num=2
"""
