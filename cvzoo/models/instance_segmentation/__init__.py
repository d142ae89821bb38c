"""Instance segmentation models: ``masks, labels, scores = model.predict(imgs)``
(see DESIGN.md)."""
