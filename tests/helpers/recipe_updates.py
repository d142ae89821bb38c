"""Two optimizer updates of a family's TrainingRecipe on examples of its task layout:
the transform, the converter and ``make_optimizer`` as ``cvzoo.training.train`` runs
them, with the model on a given device."""

import numpy

from cvzoo.core import backend


def two_updates(recipe, examples, device, lr=None):
    """Run two updates of ``recipe`` on ``examples`` (one batch) with its train chain on
    ``device`` (``recipe.make_optimizer(lr)``: None is the recipe's rate).

    Returns:
        tuple: the two losses (floats) and the parameter paths whose values changed.
    """
    chain = recipe.train_chain
    chain.to_device(device)
    optimizer = recipe.make_optimizer(lr)
    before = {path: backend.to_numpy(param.array).copy()
              for path, param in chain.namedparams() if param.array is not None}
    batch = [recipe.transform(example) for example in examples]
    losses = []
    for _ in range(2):
        chain.cleargrads()
        loss = chain(*recipe.converter(batch, device))
        assert backend.get_device_from_array(loss.array) == backend.get_device(device)
        loss.backward()
        optimizer.update()
        losses.append(float(loss.array))
    changed = [path for path, param in chain.namedparams()
               if path in before and not numpy.array_equal(before[path],
                                                           backend.to_numpy(param.array))]
    return losses, changed
