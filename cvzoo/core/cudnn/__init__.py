"""cuDNN for convolution, deconvolution, batch normalisation and pooling on CUDA devices.

The functions in ``cvzoo.core.functions`` call the thin wrappers here from their GPU
branch; each returns None unless :func:`should_use` says yes and cuDNN takes the case,
and then the im2col/CuPy path runs, which stays the reference. ``convolution`` and
``batch_normalization`` run one cuDNN graph each through NVIDIA's frontend (the ``cudnn``
Python module of ``nvidia-cudnn-frontend``); the frontend's Python graph API has no
pooling, so ``pooling`` calls libcudnn's pooling forward by ctypes. Nothing here imports
``cudnn`` or CuPy when cvzoo is imported.

The switches are config fields (``cvzoo.core.using_config``): ``use_cudnn`` ('auto',
'always', 'never'), ``cudnn_benchmark``, ``cudnn_deterministic`` and ``allow_tf32``.
"""

from cvzoo.core.cudnn.availability import frontend, should_use  # noqa: F401
