"""One package per study (``s1`` ... ``s5``), each holding what only that study uses.

A study imports the cores (:mod:`kgeval.lp`, :mod:`kgeval.ea`) and the shared modules, never another study.
"""

from kgeval.config import schema_defaults

__all__ = ["STUDIES"]

#: the studies, in the order the workflow includes their rule files: the sections of the config schema's ``studies``
#: (a study is added there), each with one package here, one folder of scripts and of tests, one target rule
#: ``study_<study>`` and one claims table
STUDIES: tuple[str, ...] = tuple(schema_defaults("studies"))
