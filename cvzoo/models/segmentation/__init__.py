"""Semantic segmentation models: ``labels = model.predict(imgs)`` (see DESIGN.md)."""
