"""Object detectors behind one predict() (DESIGN.md), one subpackage per family."""
