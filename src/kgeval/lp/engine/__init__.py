"""The ranking engine's fast kernels: they make :mod:`kgeval.lp.ranking` fast and never change its ranks.

:mod:`~kgeval.lp.engine.rowcount` counts ``True`` per row of a comparison mask, :mod:`~kgeval.lp.engine.rownorm`
computes row norms in chunks on the worker threads. Each is tested against the plain numpy or torch expression it
replaces.
"""
