"""DeepLabV3 (Chen et al., 2017): atrous spatial pyramid pooling on a dilated ResNet."""
