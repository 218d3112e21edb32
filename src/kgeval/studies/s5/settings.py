"""The settings of S5 (the ``studies.s5`` config section), built from the validated config.

Defaults live only in the schema (``workflow/schemas/config.schema.yaml``): the workflow validates the config with
defaults filled in, and :meth:`S5Settings.from_config` reads every key from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kgeval.studies.s5.negatives import STRATEGIES

__all__ = ["RANK_COLUMNS", "PLATT_PROCEDURES", "PlattSettings", "S5Settings"]

#: rank type -> its column in the ranks of :func:`kgeval.lp.ranking.rank_lp`
RANK_COLUMNS = {"optimistic": "rank_optimistic", "realistic": "rank_realistic", "pessimistic": "rank_pessimistic"}
#: the Platt procedures (``studies.s5.platt.procedure``): ``both`` runs the two side by side
PLATT_PROCEDURES: tuple[str, ...] = ("converged", "paper")


@dataclass(frozen=True)
class PlattSettings:
    """How the Platt functions are learnt (the ``studies.s5.platt`` section).

    :ivar procedure: ``converged``, ``paper`` or ``both``
    :ivar learning_rate: the paper procedure's step size (raw scores)
    :ivar batch_size: the paper procedure's points per mini-batch
    :ivar epochs: the paper procedure's epoch budget per initialisation
    """

    procedure: str
    learning_rate: float
    batch_size: int
    epochs: int

    def __post_init__(self) -> None:
        if self.procedure not in (*PLATT_PROCEDURES, "both"):
            raise ValueError(f"studies.s5.platt.procedure: {self.procedure!r}; use converged, paper or both")

    @property
    def procedures(self) -> tuple[str, ...]:
        """The procedures run, in table order."""
        return PLATT_PROCEDURES if self.procedure == "both" else (self.procedure,)

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> PlattSettings:
        """The settings of a validated ``studies.s5.platt`` section (every key present)."""
        return cls(
            procedure=section["procedure"],
            learning_rate=float(section["learning_rate"]),
            batch_size=int(section["batch_size"]),
            epochs=int(section["epochs"]),
        )


@dataclass(frozen=True)
class S5Settings:
    """How S5 fits and assesses calibration functions (the ``studies.s5`` config section).

    :ivar strategies: negative strategies assessed on test (LCWA is always used for fitting)
    :ivar platt_inits: initial ``(a, b)`` of the Platt functions
    :ivar histogram_bins: bins of the negatives' histogram for Platt scaling
    :ivar platt: how the Platt functions are learnt (:class:`PlattSettings`)
    :ivar seed: seed of the held-out validation share and of the paper procedure's mini-batch order
    :ivar holdout_fraction: share of the validation triples held out of the fit (0: none)
    :ivar union_negatives: ``True``: negatives as the set union of Eq. 12; ``False``: per positive and side
    :ivar rank_type: rank used for ``MR`` and for the relative ranks of Eq. 19 (the paper uses fractional ranks)
    :ivar memory_budget_mb: bound on one batch of scores, for the rank evaluation and the calibration alike
    :ivar device: ``cpu``, ``cuda`` or None (GPU if present)
    """

    strategies: tuple[str, ...]
    platt_inits: tuple[tuple[float, float], ...]
    histogram_bins: int
    platt: PlattSettings
    seed: int
    holdout_fraction: float
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
            platt=PlattSettings.from_config(section["platt"]),
            seed=int(section["seed"]),
            holdout_fraction=float(section["holdout_fraction"]),
            union_negatives=bool(section["union_negatives"]),
            rank_type=section["rank_type"],
            memory_budget_mb=float(memory_budget_mb),
            device=device,
        )
