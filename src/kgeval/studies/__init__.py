"""One package per study (``s1`` ... ``s5``), each holding what only that study uses.

A study imports the cores (:mod:`kgeval.lp`, :mod:`kgeval.ea`) and the shared modules, never another study.
"""

__all__ = ["STUDIES"]

#: the studies, in the order the workflow includes their rule files: one config section (``studies.<study>``), one
#: package here, one folder of scripts and of tests, one target rule ``study_<study>`` and one claims table each
STUDIES: tuple[str, ...] = ("s1", "s2", "s3", "s4", "s5")
