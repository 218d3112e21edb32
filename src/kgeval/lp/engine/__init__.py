"""The ranking engine's speed machinery: it makes :mod:`kgeval.lp.ranking` fast and never changes its ranks.

:mod:`~kgeval.lp.engine.batches` scores rows batch by batch under the memory budget; each batch is reduced on CPU
block by block of rows (:mod:`~kgeval.lp.engine.cpu_blocks`) or with torch as a whole on a GPU
(:mod:`~kgeval.lp.engine.device_batch`); :mod:`~kgeval.lp.engine.topk` takes the top-k lists,
:mod:`~kgeval.lp.engine.block_kernels` holds the compiled reduction of a CPU block (counts, top-k lists),
:mod:`~kgeval.lp.engine.rownorm` computes row norms in chunks on the worker threads. Each is tested against the plain numpy or torch expression it
replaces, or against brute force.
"""
