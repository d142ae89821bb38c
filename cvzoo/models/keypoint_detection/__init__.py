"""Keypoint detection models: ``points, point_scores, labels, scores = model.predict(imgs)``
(see DESIGN.md)."""
