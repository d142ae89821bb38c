"""RetinaNet (Lin et al., "Focal Loss for Dense Object Detection", ICCV 2017) on ResNet-50 FPN."""
