"""S4's Sec. 5 claims on the metrics themselves (Zhou et al. 2022, Figs. 7 and 8) on this tier's own systems.

Both read the dataset's own test labels (level ``original``: the incomplete labels the paper's Sec. 5.2 sentences are
about):

- ``fig7_macro_more_stable`` (Fig. 7a, "macro metrics are more stable than micro metrics on incomplete test graph"):
  from ``stability.tsv`` (the mean and standard deviation over the subsampling draws of Kendall's tau between the
  ranking on a subsample of the test questions and the ranking on all of them), the statistic is the mean over the
  subsample fractions of ``tau(macro) - tau(micro)``, for MRR and for Hits@10; it holds when both are above 0. Its
  interval is normal over the draws: each fraction's difference has variance ``(sd_macro^2 + sd_micro^2) / draws``
  (micro and macro taken as independent draws, which widens the interval where they share them), the fractions
  being drawn apart. With few systems tau is often 1 for both: a difference of 0 never holds.
- ``fig8_macro_more_discriminative`` (Fig. 8a, "almost all macro metrics are more discriminative than micro
  metrics on incomplete test set"): from ``discriminative.tsv`` (one p-value per system pair and metric), a metric's
  discriminative power is its mean p-value over the pairs (the area under the sorted p-value curve divided by the
  pairs, as Fig. 8 draws it); it holds when at least 3 of the 4 macro metrics (MRR, Hits@10, MAP@20, nDCG@20) lie
  below both micro ones (MRR, Hits@10), the released tier's reading of the same sentence. The pairs' p-values are
  not resampled (each is already a permutation test over the components of linked questions), so the verdict is at
  most ``inconclusive`` and the reason names the side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from kgeval.claims import (
    INCONCLUSIVE,
    NOT_CHECKABLE,
    Claim,
    Criterion,
    Judgement,
    combine,
    format_interval,
    interval_claim,
    judge,
)

__all__ = ["INCOMPLETE_LEVEL", "MACRO_METRICS", "MICRO_METRICS", "stability_claim", "discrimination_claim"]

#: the level of the dataset's own (incomplete) test labels in the S4 tables
INCOMPLETE_LEVEL = "original"
#: Fig. 8's macro metrics and micro metrics
MACRO_METRICS: tuple[str, ...] = ("mrr", "hits@10", "map@20", "ndcg@20")
MICRO_METRICS: tuple[str, ...] = ("mrr", "hits@10")


def _stability_parts(table: pd.DataFrame, metric: str, level: float) -> tuple[Judgement, str, str] | None:
    """The judgement, interval text and value text of one metric's mean macro - micro tau over the fractions."""
    part = table[(table["level"] == INCOMPLETE_LEVEL) & (table["metric"] == metric)]
    wide = part.pivot_table(index="fraction", columns="family", values=["tau_mean", "tau_std", "num_defined"])
    if wide.empty or not {"macro", "micro"} <= set(wide["tau_mean"].columns):
        return None
    diff = (wide["tau_mean"]["macro"] - wide["tau_mean"]["micro"]).to_numpy(float)
    var = ((wide["tau_std"]["macro"] ** 2) / wide["num_defined"]["macro"]
           + (wide["tau_std"]["micro"] ** 2) / wide["num_defined"]["micro"]).to_numpy(float)
    mean = float(np.mean(diff))
    se = math.sqrt(float(np.sum(var))) / len(diff)
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    low, high = mean - z * se, mean + z * se
    judgement = judge(mean, low, high, Criterion(lower=0.0, strict=True), name=f"mean macro - micro tau ({metric})")
    fractions = wide.index.to_numpy(float)
    text = (f"{metric}: mean macro - micro tau {mean:+.4f} over {len(diff)} fractions "
            f"({fractions.min():g}-{fractions.max():g}); macro above micro at {int(np.sum(diff > 0))}, equal at "
            f"{int(np.sum(diff == 0))}")
    return judgement, f"{metric}: {format_interval(low, high)}", text


def stability_claim(name: str, stability: pd.DataFrame, basis: str, level: float = 0.95) -> Claim:
    """Fig. 7a's claim on one (dataset, seed) ``stability.tsv`` (module docstring); ``name`` labels it."""
    claim = f"s4.{name}.fig7_macro_more_stable"
    statement = ("Sec. 5.2, Fig. 7a: on incomplete test labels macro metrics are more stable than micro ones under "
                 "test subsampling (higher Kendall tau to the whole test set), for MRR and Hits@10")
    paper = "FB15k-237 at 80 %: micro tau about 0.8, macro above 0.95"
    tolerance = "mean over the fractions of tau(macro) - tau(micro) > 0, MRR and Hits@10 (whole interval)"
    parts = [p for p in (_stability_parts(stability, m, level) for m in MICRO_METRICS) if p is not None]
    if not parts:
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE,
                     f"no macro and micro rows at level {INCOMPLETE_LEVEL} in stability.tsv", basis=basis)
    draws = int(stability["num_defined"].max()) if "num_defined" in stability else 0
    unit = (f"{100 * level:g} % normal interval over {draws} subsampling draws per fraction, micro and macro taken "
            "as independent draws")
    return interval_claim(claim, statement, paper, "; ".join(p[2] for p in parts), combine([p[0] for p in parts]),
                          "; ".join(p[1] for p in parts) + f" ({unit})", tolerance, basis=basis)


def discrimination_claim(name: str, discriminative: pd.DataFrame, basis: str) -> Claim:
    """Fig. 8a's claim on one (dataset, seed) ``discriminative.tsv`` (module docstring); ``name`` labels it."""
    claim = f"s4.{name}.fig8_macro_more_discriminative"
    statement = ("Sec. 5.2, Fig. 8a: on incomplete test labels almost all macro metrics are more discriminative "
                 "than the micro ones (smaller mean p-value over the system pairs)")
    paper = "most macro metrics below both micro curves (FB15k-237)"
    tolerance = "at least 3 of the 4 macro metrics below both micro metrics"
    part = discriminative[discriminative["level"] == INCOMPLETE_LEVEL]
    mean_p: Mapping[tuple[str, str], float] = part.groupby(["family", "metric"])["pvalue"].mean().to_dict()
    wanted = [("macro", m) for m in MACRO_METRICS] + [("micro", m) for m in MICRO_METRICS]
    missing = [f"{f} {m}" for f, m in wanted if (f, m) not in mean_p]
    if missing:
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE,
                     f"discriminative.tsv lacks {', '.join(missing)} at level {INCOMPLETE_LEVEL}", basis=basis)
    micro = min(mean_p[("micro", m)] for m in MICRO_METRICS)
    better = [m for m in MACRO_METRICS if mean_p[("macro", m)] < micro]
    pairs = int(part.groupby(["family", "metric"]).size().max())
    text = (f"{len(better)} of 4 macro metrics ({', '.join(better) or 'none'}) below both micro metrics; mean p-value "
            f"over {pairs} pairs: " + "; ".join(f"{f} {m} {mean_p[(f, m)]:.4f}" for f, m in wanted))
    side = "holds" if len(better) >= 3 else "differs"
    return Claim(claim, statement, paper, text, tolerance, INCONCLUSIVE,
                 f"no interval on the mean p-values (each pair's p-value is its own permutation test); the counts lie "
                 f"on the {side} side", interval="not resampled: mean p-values of the pairwise permutation tests",
                 basis=basis)
