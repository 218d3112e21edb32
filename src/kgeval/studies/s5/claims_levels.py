"""S5's claims on the levels of Fig. 1 (paper 004, Sec. 6.2), checked on kgeval's ``assessment.tsv``.

Sec. 6.2 reads Fig. 1 (the best calibration function of each model, LCWA negatives, test split): "all mean values
[of R2_w] are between 0.7 and 0.9", "the BS_w mean values are less or equal than 0.1", "high BA values with mean
values greater or equal than 0.9". Per run (dataset, model, seed), the selected function's (best validation
``R2_w``) test measure on LCWA is compared with the level:

- ``s5.fig1_r2w_in_0.7_0.9``: ``0.7 <= R2_w <= 0.9``;
- ``s5.fig1_bs_w_le_0.1``: ``BS_w <= 0.1``;
- ``s5.fig1_ba_ge_0.9``: ``BA >= 0.9``.

Criterion (fixed before looking at the results): the paper's reading that "most" models meet the level, i.e. more
than half of the runs do. Each claim reports the share of runs that meets it and, beside it, each model's mean over
its runs (the paper's figure aggregates per method). No interval: the negatives' sums are streamed over every
negative and their per-query values are not kept, so the verdict is at most ``inconclusive``, naming the side of the
point values; ``not checkable`` when no run has the measure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.claims import INCONCLUSIVE, NOT_CHECKABLE, Claim, Criterion

__all__ = ["Level", "LEVELS", "MAJORITY", "level_values", "level_claim", "level_claims"]

#: the share of runs above which "most" models meet a level
MAJORITY = 0.5


@dataclass(frozen=True)
class Level:
    """One of Fig. 1's levels: the claim id, the metric of ``assessment.tsv``, its region, and the paper's words."""

    claim: str
    metric: str
    criterion: Criterion
    label: str
    paper: str


LEVELS: tuple[Level, ...] = (
    Level("s5.fig1_r2w_in_0.7_0.9", "r2_w", Criterion(0.7, 0.9), "R2_w", "mean R2_w between 0.7 and 0.9 (Fig. 1a)"),
    Level("s5.fig1_bs_w_le_0.1", "bs_w", Criterion(upper=0.1), "BS_w", "mean BS_w <= 0.1 (Fig. 1b)"),
    Level("s5.fig1_ba_ge_0.9", "ba", Criterion(lower=0.9), "BA", "mean BA >= 0.9 (Fig. 1c)"),
)

_RUN = ["dataset", "model", "seed"]
_NO_INTERVAL = (
    "not resampled: the LCWA measures are streamed sums over every negative; per-query values are not kept"
)


def _bool(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def level_values(assessment: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per run, the selected function's test ``metric`` on LCWA (runs where it is NaN left out).

    :return: columns ``dataset, model, seed, value``
    """
    a = assessment[_bool(assessment["selected"]) & (assessment["strategy"] == "lcwa")]
    a = a[a["metric"] == metric]
    values = a[_RUN].astype(str).assign(value=a["value"].astype(float).to_numpy())
    return values[values["value"].notna()].reset_index(drop=True)


def level_claim(assessment: pd.DataFrame, level: Level) -> Claim:
    """The claim of one of Fig. 1's levels (module docstring)."""
    name = level.criterion.text(level.label, digits=2)
    statement = f"Sec. 6.2, Fig. 1: the best function's test {level.label} (LCWA) meets {name} for most models"
    tolerance = f"{name} in more than half of the runs"
    values = level_values(assessment, level.metric)
    if not len(values):
        reason = f"no run with a selected function's LCWA {level.label} on test"
        return Claim(level.claim, statement, level.paper, "no run", tolerance, NOT_CHECKABLE, reason)
    meets = values["value"].map(level.criterion.contains)
    share = float(meets.mean())
    per_model = values.groupby("model", sort=True)["value"].mean()
    v = values["value"].to_numpy(float)
    kgeval = (
        f"{name} in {int(meets.sum())} of {len(values)} runs (share {share:.2f}); {level.label} min {np.min(v):.4f}, "
        f"median {np.median(v):.4f}, max {np.max(v):.4f}; mean per model: "
        + ", ".join(f"{model} {mean:.3f}" for model, mean in per_model.items())
    )
    side = "holds side" if share > MAJORITY else "differs side (not more than half of the runs meet it)"
    return Claim(
        level.claim,
        statement,
        level.paper,
        kgeval,
        tolerance,
        INCONCLUSIVE,
        f"no interval, so noise cannot be ruled out; the point values lie on the {side}",
        interval=_NO_INTERVAL,
    )


def level_claims(assessment: pd.DataFrame) -> list[Claim]:
    """The claims of all of Fig. 1's levels (:data:`LEVELS`)."""
    return [level_claim(assessment, level) for level in LEVELS]
