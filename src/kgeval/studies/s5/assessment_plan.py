"""Which calibration functions S5's test pass assesses, and on which negative strategies (paper 004, Sec. 5-6).

The test pass (:func:`kgeval.studies.s5.assessment.assess_negatives`) applies every assessed function to every
negative of the test split, which makes it most of an ``assess_calibration`` job. The plan
(:func:`plan_assessment`) keeps what each claim, table and figure reads and no more:

- **every strategy** (LCWA, GB, TC, LC, GB+LC) for the best function of each method and procedure by validation
  ``R2_w`` (isotonic regression, the best Platt function of each procedure; the selected function is one of them):
  Fig. 2 and the strategies claim read the selected function, Table 2 and the out-of-sample claims the best ones;
- **LCWA only** for the other Platt functions: Fig. 3, its spread and Appendix B read their LCWA measures only;
- **one pass per distinct function**: Platt functions whose ``(a, b)`` agree to a relative :data:`SAME_RTOL` (the
  converged procedure's six initialisations reach one optimum of a convex loss) give posteriors that agree to about
  the same relative amount, so the pass computes the first of them and :func:`expand_sums` copies its negatives'
  sums to the others (each keeps its own positives); ``calibrators.tsv`` names the function whose negatives' sums a
  function carries (``assessed_with``);
- **the held-out validation share** (``holdout_*`` of ``calibrators.tsv``) for the best functions only: the
  out-of-sample claims compare isotonic regression with the best Platt function of each procedure there.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.studies.s5.calibration import Calibrator
from kgeval.studies.s5.measures import CalibrationSums

__all__ = [
    "SAME_RTOL",
    "AssessmentPlan",
    "calibrators_to_assess",
    "best_of_method",
    "best_names",
    "plan_assessment",
    "expand_sums",
]

#: the relative agreement of two Platt functions' ``(a, b)`` under which the test pass computes one of them
SAME_RTOL = 1e-6


@dataclass(frozen=True)
class AssessmentPlan:
    """What the test pass computes (module docstring).

    :ivar assessed: every assessed function
    :ivar distinct: the functions the pass applies, in the order of the assessed ones
    :ivar same_as: name of a function left out of the pass -> the distinct function it agrees with
    :ivar every_strategy: names of the distinct functions assessed on every strategy (the others: LCWA only)
    :ivar best: names of the best function of each method and procedure (by validation ``R2_w``)
    """

    assessed: list[Calibrator]
    distinct: list[Calibrator]
    same_as: dict[str, str]
    every_strategy: frozenset[str]
    best: frozenset[str] = frozenset()

    @property
    def names(self) -> set[str]:
        """The names of every assessed function, in the pass or not."""
        return {c.name for c in self.assessed}

    def calibrator(self, name: str) -> Calibrator:
        """The assessed function called ``name`` (its own, for its positives)."""
        return next(c for c in self.assessed if c.name == name)

    def strategies_of(self, name: str, strategies: Sequence[str]) -> list[str]:
        """The strategies assessed for function ``name`` (distinct or not)."""
        if "lcwa" not in strategies or self.same_as.get(name, name) in self.every_strategy:
            return list(strategies)
        return ["lcwa"]

    def weight_rows(self, strategies: Sequence[str]) -> list[slice]:
        """Per distinct function, the rows of the pass's weight matrix (one per strategy) it is summed with."""
        if "lcwa" not in strategies:
            return [slice(None)] * len(self.distinct)
        lcwa = list(strategies).index("lcwa")
        return [slice(None) if c.name in self.every_strategy else slice(lcwa, lcwa + 1) for c in self.distinct]

    def assessed_with(self, names: Sequence[str]) -> list[str]:
        """Per function name, the distinct function whose negatives' sums it carries."""
        return [self.same_as.get(n, n) for n in names]


def calibrators_to_assess(calibrators: Sequence[Calibrator]) -> list[Calibrator]:
    """The isotonic function and every Platt function of every procedure (Fig. 3 shows the six of each)."""
    return [c for c in calibrators if c.method in ("isotonic", "platt")]


def best_of_method(
    calibrators: Sequence[Calibrator], table: pd.DataFrame, method: str, procedure: str | None = None
) -> Calibrator | None:
    """The calibrator of ``method`` (and ``procedure``, if given) with the best validation ``R2_w`` (None if none)."""
    rows = table[table["method"] == method]
    if procedure is not None:
        rows = rows[rows["procedure"] == procedure]
    if not len(rows):
        return None
    name = rows.loc[rows["r2_w"].idxmax(), "calibrator"]
    return next(c for c in calibrators if c.name == name)


def best_names(calibrators: Sequence[Calibrator], table: pd.DataFrame) -> set[str]:
    """The names of the best isotonic function and of the best Platt function of each procedure."""
    procedures = sorted(set(table.loc[table["method"] == "platt", "procedure"]))
    chosen = [best_of_method(calibrators, table, "isotonic")]
    chosen += [best_of_method(calibrators, table, "platt", p) for p in procedures]
    return {c.name for c in chosen if c is not None}


def _same(first: Calibrator, second: Calibrator, rtol: float) -> bool:
    """Whether two Platt functions of one procedure agree to ``rtol`` in ``(a, b)``."""
    if first.method != "platt" or second.method != "platt" or first.procedure != second.procedure:
        return False
    return bool(np.allclose(first.parameters(), second.parameters(), rtol=rtol, atol=0.0))


def plan_assessment(
    calibrators: Sequence[Calibrator], table: pd.DataFrame, rtol: float = SAME_RTOL
) -> AssessmentPlan:
    """The plan of the module docstring for the assessed ``calibrators`` (:func:`calibrators_to_assess`), with
    ``table`` the validation table of :func:`~kgeval.studies.s5.fitting.fit_candidates` (its ``r2_w``)."""
    distinct: list[Calibrator] = []
    same_as: dict[str, str] = {}
    for calibrator in calibrators:
        match = next((d for d in distinct if _same(d, calibrator, rtol)), None)
        if match is None:
            distinct.append(calibrator)
        else:
            same_as[calibrator.name] = match.name
    best = best_names(calibrators, table)
    every = frozenset(same_as.get(name, name) for name in best)
    return AssessmentPlan(list(calibrators), distinct, same_as, every, frozenset(best))


def expand_sums(
    sums: Mapping[tuple[str, str], CalibrationSums], plan: AssessmentPlan, strategies: Sequence[str]
) -> dict[tuple[str, str], CalibrationSums]:
    """The pass's sums (of the distinct functions) with a copy for each function left out of it, on its strategies."""
    out = dict(sums)
    for name, representative in plan.same_as.items():
        for strategy in plan.strategies_of(name, strategies):
            out[(name, strategy)] = copy.deepcopy(sums[(representative, strategy)])
    return out
