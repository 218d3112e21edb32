"""Settings objects of the S4 jobs, built by the scripts from the rules' params (the ``studies.s4`` config section)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LabelSettings", "LevelSettings", "StabilitySettings"]


@dataclass(frozen=True)
class LabelSettings:
    """How one dataset's label set is built (``studies.s4.released``, ``simulation``, ``pool.max_depth``).

    :ivar released: read the S4 release (FB15k-237 only) instead of simulating
    :ivar release_folder: the release's data folder relative to ``data_dir`` (None: download and cache it)
    :ivar hide_fraction: share of the test answers hidden from the sparse labels (simulation)
    :ivar seed: seed of the simulation
    :ivar max_depth: the deepest pooling level
    """

    released: bool
    release_folder: str | None
    hide_fraction: float
    seed: int
    max_depth: int


@dataclass(frozen=True)
class LevelSettings:
    """How every level is evaluated (``studies.s4.rank_type``, ``hits_at``, ``ir_cutoff``, ``pool.max_depth``)."""

    max_depth: int
    rank_type: str
    hits_at: Sequence[int]
    ir_cutoff: int


@dataclass(frozen=True)
class StabilitySettings:
    """Fig. 7's subsets (``studies.s4.stability``) and the metrics they are measured with."""

    levels: Sequence[str]
    max_depth: int
    fractions: Sequence[float]
    repeats: int
    seed: int
    hits_at: Sequence[int]
    ir_cutoff: int
