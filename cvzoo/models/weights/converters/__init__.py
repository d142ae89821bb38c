"""Readers and converters for foreign weight formats (PyTorch, Darknet, npz, HDF5).

Each module reads one format into plain NumPy arrays; mapping the names onto a cvzoo
model belongs to that model's family (``convert_weights``), never to these readers.
"""
