"""One package per study (``s1`` ... ``s5``), each holding what only that study uses.

A study imports the cores (:mod:`kgeval.lp`, :mod:`kgeval.ea`) and the shared modules, never another study.
"""
