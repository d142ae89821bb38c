"""docs/training.md stays true: its ```python blocks run, in order, in one namespace."""

import pathlib
import re

import numpy

DOC = pathlib.Path(__file__).resolve().parents[1] / 'docs' / 'training.md'
_BLOCK = re.compile(r'^```python\n(.*?)^```', re.MULTILINE | re.DOTALL)


def test_the_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the trainer writes into ./result
    numpy.random.seed(0)
    blocks = _BLOCK.findall(DOC.read_text())
    assert len(blocks) == 3
    namespace = {'__name__': 'training_docs'}
    for block in blocks:
        exec(compile(block, str(DOC), 'exec'), namespace)
    assert (tmp_path / 'result' / 'mlp_best.npz').exists()
    assert (tmp_path / 'trained' / 'model_final.npz').exists()
