"""cuDNN for convolution, deconvolution and batch normalisation on CUDA devices.

The functions in ``cvzoo.core.functions`` ask :func:`should_use` in their GPU branch; when
it says yes they call the thin wrappers here (``convolution``, ``batch_normalization``,
which run one cuDNN graph each through NVIDIA's frontend, the ``cudnn`` Python module of
``nvidia-cudnn-frontend``; ``pooling``, which calls libcudnn's pooling forward). Otherwise the im2col/CuPy path runs, and it stays the
reference. Nothing here imports ``cudnn`` or CuPy when cvzoo is imported.

The switches are config fields (``cvzoo.core.using_config``): ``use_cudnn`` ('auto',
'always', 'never'), ``cudnn_benchmark``, ``cudnn_deterministic`` and ``allow_tf32``.
The frontend's Python graph API has no pooling operation, hence ``pooling``'s ctypes call.
"""

from cvzoo.core.cudnn.availability import frontend, should_use  # noqa: F401
