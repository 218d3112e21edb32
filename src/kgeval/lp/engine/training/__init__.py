"""The training wing of the engine: patches and compiled kernels that make PyKEEN's training loop faster, never
different (:mod:`~kgeval.lp.engine.training.patches` puts them in place for one training run)."""
