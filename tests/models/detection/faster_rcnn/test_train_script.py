"""scripts/train_faster_rcnn.py end to end on a tiny generated VOC-layout folder."""


import pytest

from tests.helpers.scripts import load_script


# NOTE: slow: about 4 minutes on the loaded 2-core machine (RPN and head at full sample counts)
@pytest.mark.slow
@pytest.mark.parametrize('model', ['faster_rcnn_fpn_resnet50', 'faster_rcnn_vgg16'])
def test_two_iterations_and_evaluation(tmp_path, model):
    load_script('make_shapes_dataset').main(['--out', str(tmp_path / 'shapes'), '--n-train', '4',
                                         '--n-test', '2', '--size', '64'])
    out = tmp_path / 'result'
    mean_ap = load_script('train_faster_rcnn').main([
        '--dataset', str(tmp_path / 'shapes'), '--model', model, '--min-size', '64',
        '--max-size', '96', '--iteration', '2', '--out', str(out)])
    assert 0 <= mean_ap <= 1
    assert {'log', 'loss.png', 'model_final.npz'} <= {p.name for p in out.iterdir()}
