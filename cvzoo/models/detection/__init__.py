"""Object detectors behind one predict() (DESIGN.md): Darknet/YOLO detectors so far."""
