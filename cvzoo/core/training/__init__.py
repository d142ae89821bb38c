"""The training loop: iterators, updaters, the Trainer and its extensions."""
