"""The weight machinery of the zoo: typed weight entries, fetching and verifying files,
reading foreign formats, converting and caching them, loading a model's pretrained
weights and saving a trained model's own file.

    weights_schema    Weights, WeightFile, Preset, Score and their schema check
    weight_files      fetch and verify a file, trust on first use
    converters        readers of foreign formats (PyTorch, Darknet, safetensors)
    conversion_cache  a foreign file converted once and cached as cvzoo .npz
    convert           a foreign file converted to cvzoo's .npz or .safetensors
    pretrained        the ``pretrained_model=`` argument of every model constructor
    trained_model     ``model_final.npz``: weights plus what rebuilds the model
    embedded          the files shipped inside the package (the default detector)

The public names stay in :mod:`cvzoo.models` (``get_model``, ``load_weights``...).
"""
