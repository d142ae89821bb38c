"""ESPNet (Mehta et al., ECCV 2018): efficient spatial pyramids of dilated convolutions."""
