"""What the registry-wide training tests share (tests/training/test_registry_training.py,
test_registry_cuda_graph.py): each registered entry built small for a few training steps."""

import dataclasses

# classifiers whose fully connected layers need a given input side; others train at 64
CLASSIFIER_SIZE = {'vgg16': 224, 'small_cnn': 32}


def small_for_training(name, build_small_model):
    """``(task, model)``: the entry ``name`` built by the ``build_small_model`` fixture,
    a classifier's input side set to what its layers need (64 when they take any)."""
    task, model = build_small_model(name)
    if task == 'classification':
        model.preset = dataclasses.replace(model.preset, size=CLASSIFIER_SIZE.get(name, 64))
    return task, model
