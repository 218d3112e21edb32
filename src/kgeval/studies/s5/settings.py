"""The settings of S5 (the ``studies.s5`` config section), built from the validated config.

Defaults live only in the schema (``workflow/schemas/config.schema.yaml``): the workflow validates the config with
defaults filled in, and :meth:`S5Settings.from_config` reads every key from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kgeval.studies.s5.negatives import STRATEGIES

__all__ = ["RANK_COLUMNS", "S5Settings"]

#: rank type -> its column in the ranks of :func:`kgeval.lp.ranking.rank_lp`
RANK_COLUMNS = {"optimistic": "rank_optimistic", "realistic": "rank_realistic", "pessimistic": "rank_pessimistic"}


@dataclass(frozen=True)
class S5Settings:
    """How S5 fits and assesses calibration functions (the ``studies.s5`` config section).

    :ivar strategies: negative strategies assessed on test (LCWA is always used for fitting)
    :ivar platt_inits: initial ``(a, b)`` of the Platt functions
    :ivar histogram_bins: bins of the negatives' histogram for Platt scaling
    :ivar platt_gd_learning_rate: fixed learning rate of Platt's gradient descent (standardised coordinates)
    :ivar platt_gd_steps: step budget of Platt's gradient descent, per initialisation
    :ivar union_negatives: ``True``: negatives as the set union of Eq. 12; ``False``: per positive and side
    :ivar rank_type: rank used for ``MR`` and for the relative ranks of Eq. 19 (the paper uses fractional ranks)
    :ivar memory_budget_mb: bound on one batch of scores, for the rank evaluation and the calibration alike
    :ivar device: ``cpu``, ``cuda`` or None (GPU if present)
    """

    strategies: tuple[str, ...]
    platt_inits: tuple[tuple[float, float], ...]
    histogram_bins: int
    platt_gd_learning_rate: float
    platt_gd_steps: int
    union_negatives: bool
    rank_type: str
    memory_budget_mb: float
    device: str | None

    def __post_init__(self) -> None:
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown:
            raise ValueError(f"studies.s5.strategies: unknown {unknown}; use some of {list(STRATEGIES)}")
        if self.rank_type not in RANK_COLUMNS:
            raise ValueError(f"studies.s5.rank_type: {self.rank_type!r}; use one of {list(RANK_COLUMNS)}")

    @classmethod
    def from_config(cls, section: Mapping[str, Any], *, memory_budget_mb: float, device: str | None) -> S5Settings:
        """The settings of a validated ``studies.s5`` section (every key present: the schema fills in defaults).

        :param section: the ``studies.s5`` config section (``enabled``, ``models``, ``datasets`` and
            ``unavailable_models`` are not read here)
        :param memory_budget_mb: ``ranking.memory_budget_mb``
        :param device: ``cpu``, ``cuda`` or None
        """
        return cls(
            strategies=tuple(section["strategies"]),
            platt_inits=tuple(tuple(float(v) for v in pair) for pair in section["platt_inits"]),
            histogram_bins=int(section["histogram_bins"]),
            platt_gd_learning_rate=float(section["platt_gd_learning_rate"]),
            platt_gd_steps=int(section["platt_gd_steps"]),
            union_negatives=bool(section["union_negatives"]),
            rank_type=section["rank_type"],
            memory_budget_mb=float(memory_budget_mb),
            device=device,
        )
