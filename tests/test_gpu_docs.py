"""docs/gpu.md stays true: every ```python block runs, on the GPUs it names.

The blocks of one section run in order in one fresh namespace. A section runs when the
machine has the GPUs its code names (``'cuda:1'`` needs two, anything else one): on the
CuPy stand-in under ``pytest --fake-cuda`` (two fake GPUs) in CI, and on a real GPU in
``tools/gpu_check.sh``, where the one-GPU sections compile their CUDA kernels for real.
"""

import pathlib
import re

import numpy
import pytest

from cvzoo.core import backend

DOC = pathlib.Path(__file__).resolve().parents[1] / 'docs' / 'gpu.md'
_BLOCK = re.compile(r'^```python\n(.*?)^```', re.MULTILINE | re.DOTALL)


def _sections():
    """{section title: [python blocks, in order]} for the sections that have any."""
    sections = {}
    for part in re.split(r'^## ', DOC.read_text(), flags=re.MULTILINE)[1:]:
        title, _, body = part.partition('\n')
        blocks = _BLOCK.findall(body)
        if blocks:
            sections[title.strip()] = blocks
    return sections


SECTIONS = _sections()


def _gpus_needed(blocks):
    ordinals = [int(n) for block in blocks for n in re.findall(r"cuda:(\d+)", block)]
    if any('try_all_gpus' in block for block in blocks):
        ordinals.append(1)  # the data-parallel example means several GPUs
    return max(ordinals, default=0) + 1


def test_every_story_has_an_example():
    assert list(SECTIONS) == [
        'One GPU', 'A model on a second GPU', 'Model parallelism: layers on different GPUs',
        'Data parallelism in one process', 'Your own kernel', 'Waiting for a GPU and timing it',
        'Streams', 'Mixed precision', 'CUDA graphs', 'cuDNN']
    text = DOC.read_text()
    assert '\nmpiexec -n 2 python scripts/train_ssd.py' in text
    assert '--communicator nccl' in text and 'tools/gpu_check.sh' in text


@pytest.mark.parametrize('title', list(SECTIONS))
def test_section_runs(title):
    blocks = SECTIONS[title]
    needed = _gpus_needed(blocks)
    if backend.num_gpus() < needed:
        pytest.skip(f'needs {needed} GPU(s) (run pytest --fake-cuda for the CuPy stand-in)')
    numpy.random.seed(0)
    namespace = {'__name__': f'gpu_docs_{title}'}
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f'docs/gpu.md: {title!r}, block {i + 1}', 'exec'), namespace)
    finally:
        backend.get_device('cuda:0').use()  # the next test starts with GPU 0 current
