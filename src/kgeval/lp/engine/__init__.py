"""The link-prediction half of the speed wing: it makes :mod:`kgeval.lp.ranking` and :mod:`kgeval.lp.training` fast
and never changes a rank or a trained parameter.

:mod:`~kgeval.lp.engine.batches` scores rows batch by batch under the memory budget; each batch is reduced on CPU
block by block of rows (:mod:`~kgeval.lp.engine.cpu_blocks`) or with torch as a whole on a GPU
(:mod:`~kgeval.lp.engine.device_batch`); :mod:`~kgeval.lp.engine.topk` takes the top-k lists,
:mod:`~kgeval.lp.engine.block_kernels` holds the compiled reduction of a CPU block (counts, top-k lists),
:mod:`~kgeval.lp.engine.rownorm` computes row norms in chunks on the worker threads, :mod:`~kgeval.lp.engine.training`
patches PyKEEN's training loop with compiled kernels of the same bits. Each is tested against the plain numpy or torch
expression it replaces, or against brute force.
"""
