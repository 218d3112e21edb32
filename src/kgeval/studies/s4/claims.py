"""S4's claims on this tier's own systems (study_s4: trained models, sparse labels and their pooled completions):
the Sec. 4.2 / Fig. 3-5 and Table 3-4 claims of Zhou et al. 2022 per dataset and seed.

Each claim judges a tau statistic (tau at the deepest pool against IR's bar for the same ranking,
:data:`SAME_RANKING_TAU`; the macro - micro gap at every depth; the change of every micro metric from the shallowest
to the deepest pool: the rules the released tier applies to the same sentences) on strict bounds, so that an unchanged ranking supports none of them, with its 95 % bootstrap interval over the evaluation's components of questions
linked by shared answer triples (:mod:`kgeval.studies.s4.tau_bootstrap`) and :func:`kgeval.claims.judge`:
``holds``/``differs`` only when the whole interval lies on one side of the criterion. On a dataset without released
labels the pooled labels are simulated (:func:`kgeval.studies.s4.simulation.simulate_labels`: hidden test triples
recovered from the systems' top-k lists, judged by the dataset's own triples), so the basis names that stand-in.

The Table 3 and 4 rules are those of :mod:`kgeval.studies.s4.category_claims`, their intervals over the same unit
(:mod:`kgeval.studies.s4.category_bootstrap`). The claims on the authors' released results are in
:mod:`kgeval.studies.s4.released_claims`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.claims import (
    MEASURED,
    NOT_CHECKABLE,
    Claim,
    Criterion,
    Judgement,
    combine,
    format_interval,
    interval_claim,
    judge,
    stand_in,
    write_claims,
)
from kgeval.io import read_tsv
from kgeval.studies.s4.category_bootstrap import GroupTaus, compute_group_taus
from kgeval.studies.s4.category_claims import SAME_RANKING_SOURCE, SAME_RANKING_TAU, table3_claims, table4_claim
from kgeval.studies.s4.metric_claims import discrimination_claim, stability_claim
from kgeval.studies.s4.paper import PAPER_FIG5_GAPS
from kgeval.studies.s4.tau_bootstrap import TauReplicates, compute_tau_replicates
from kgeval.uncertainty.resampling import stream_seed

__all__ = [
    "SIMULATED_POOLING",
    "SAME_RANKING_TAU",
    "SAME_RANKING_SOURCE",
    "CLAIM_METRICS",
    "trained_claims",
    "write_trained_claims",
]

#: the basis of a claim on simulated pooled labels
SIMULATED_POOLING = stand_in(
    "simulated pooling (a seeded share of the test triples hidden, the systems' top-k lists pooled, the dataset's own "
    "triples as the judge instead of the paper's human annotators)"
)
#: the (family, metric) pairs the claims judge
CLAIM_METRICS: tuple[tuple[str, str], ...] = (
    *(("micro", m) for m in ("mr", "mrr", "hits@1", "hits@3", "hits@10")), ("macro", "mrr"), ("macro", "hits@10")
)


def _tau_at(tau: pd.DataFrame, family: str, metric: str) -> pd.Series:
    """tau against the sparse labels by pooling depth (1..), of one family and metric."""
    part = tau.loc[(tau["family"] == family) & (tau["metric"] == metric) & (tau["depth"] >= 1)]
    return part.set_index("depth")["tau"].astype(float).sort_index()


def _interval(boot: TauReplicates, replicates: np.ndarray, level: float) -> tuple[float, float, str]:
    """The percentile interval of replicates and a note on the resamples where the statistic is undefined."""
    low, high, undefined = boot.interval(replicates, level)
    note = f"{undefined} of {boot.resamples} resamples undefined (a constant ranking), dropped" if undefined else ""
    return low, high, note


def _parts(
    points: Mapping[str, float], replicates: Mapping[str, np.ndarray], boot: TauReplicates, criterion: Criterion,
    level: float, what: str,
) -> tuple[Judgement, str, str]:
    """Judge one statistic per metric; the combined judgement, the interval text and the notes."""
    judgements, texts, notes = [], [], []
    for metric, point in points.items():
        low, high, note = _interval(boot, replicates[metric], level)
        judgements.append(judge(point, low, high, criterion, name=f"{what} ({metric})"))
        texts.append(f"{metric}: {format_interval(low, high)}")
        notes += [f"{metric}: {note}"] if note else []
    return combine(judgements), "; ".join(texts) + f" ({boot.unit()})", "; ".join(notes)


def _fig3_claim(name: str, tau: pd.DataFrame, boot: TauReplicates, basis: str, level: float) -> Claim:
    micro_mrr = _tau_at(tau, "micro", "mrr")
    deepest = int(micro_mrr.index.max())
    value = float(micro_mrr.loc[deepest])
    low, high, note = _interval(boot, boot.at("micro", "mrr", deepest), level)
    criterion = Criterion(upper=SAME_RANKING_TAU, strict=True)
    return interval_claim(
        f"s4.{name}.fig3_sparsity_changes_rankings",
        "Sec. 4.2, Fig. 3: label sparsity changes system rankings: the micro MRR rankings on the sparse and the pooled "
        f"labels are not the same ranking (Kendall's tau below {SAME_RANKING_TAU:g}, IR's bar for equivalent "
        "rankings)",
        "tau -0.2308 (FB-Test-S vs FB-Test-S-C, 13 systems)",
        f"tau {value:.4f} at pooling depth {deepest} ({int(tau['num_systems'].max())} systems)",
        judge(value, low, high, criterion, name="tau"),
        format_interval(low, high, boot.unit()),
        criterion.text("tau") + f" ({SAME_RANKING_SOURCE}; the paper's own figure is far below it)",
        basis=basis,
        reason=note,
    )


#: the micro metrics whose tau falls with the pooling depth (Fig. 4: "every micro metric")
FALL_METRICS: tuple[str, ...] = ("mr", "mrr", "hits@1", "hits@3", "hits@10")
#: the metrics whose macro tau lies above the micro tau at every depth (Fig. 5)
GAP_METRICS: tuple[str, ...] = ("mrr", "hits@10")


def _gap_claim(name: str, tau: pd.DataFrame, boot: TauReplicates, basis: str, level: float) -> Claim | None:
    """Fig. 5 by the released tier's rule: macro tau > micro tau at every pooling depth, MRR and Hits@10."""
    points, reps, shown = {}, {}, []
    for metric in GAP_METRICS:
        micro, macro = _tau_at(tau, "micro", metric), _tau_at(tau, "macro", metric)
        both = pd.concat({"micro": micro, "macro": macro}, axis=1).dropna()
        if both.empty or not (boot.has("micro", metric) and boot.has("macro", metric)):
            continue
        for depth, row in both.iterrows():
            key = f"{metric} depth {int(depth)}"
            points[key] = float(row["macro"] - row["micro"])
            reps[key] = boot.at("macro", metric, int(depth)) - boot.at("micro", metric, int(depth))
        above = int((both["macro"] > both["micro"]).sum())
        shown.append(f"{metric}: macro above micro at {above} of {len(both)} depths, gap {points[key]:+.4f} at the "
                     f"deepest ({int(both.index.max())})")
    if not points:
        return None
    judgement, interval, note = _parts(points, reps, boot, Criterion(lower=0.0, strict=True), level, "macro - micro tau")
    return interval_claim(
        f"s4.{name}.fig5_macro_above_micro_at_every_depth",
        "Sec. 4.2, Fig. 5: macro MRR and Hits@10 reach a higher tau than their micro counterparts at any pooling depth",
        "macro > micro at depths 1..10 (" + "; ".join(f"{m}: gap +{g:.2f} at depth 10" for m, g in PAPER_FIG5_GAPS.items())
        + ")",
        "; ".join(shown),
        judgement,
        interval,
        "macro tau - micro tau > 0 at every pooling depth, MRR and Hits@10 (the released tier's rule; whole interval at "
        "each depth; an unchanged ranking, gap 0, never holds)",
        basis=basis,
        reason=note,
    )


def _fall_claim(name: str, tau: pd.DataFrame, boot: TauReplicates, basis: str, level: float) -> Claim:
    """Fig. 4 by the released tier's rule: tau(deepest) < tau(shallowest) for every micro metric."""
    claim = f"s4.{name}.fig4_tau_falls_with_depth"
    statement = "Sec. 4.2, Fig. 4: with larger pooling depth the tau of every micro metric falls"
    paper = "tau(depth 10) < tau(depth 1), all five micro metrics"
    points, reps, shown = {}, {}, []
    for metric in FALL_METRICS:
        micro = _tau_at(tau, "micro", metric).dropna()
        if len(micro) < 2 or not boot.has("micro", metric):
            continue
        shallowest, deepest = int(micro.index.min()), int(micro.index.max())
        points[metric] = float(micro.loc[deepest] - micro.loc[shallowest])
        reps[metric] = boot.at("micro", metric, deepest) - boot.at("micro", metric, shallowest)
        shown.append(f"{metric} {micro.loc[shallowest]:.4f} -> {micro.loc[deepest]:.4f}")
    if not points:
        return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, "fewer than two pooling depths", basis=basis)
    judgement, interval, note = _parts(points, reps, boot, Criterion(upper=0.0, strict=True), level,
                                       "tau(deepest) - tau(shallowest)")
    return interval_claim(
        claim, statement, paper, "; ".join(shown), judgement, interval,
        "tau(deepest) - tau(shallowest) < 0 for every micro metric (the released tier's rule; whole interval; an "
        "unchanged tau never holds)",
        basis=basis,
        reason=note,
    )


def _fig5_claims(name: str, tau: pd.DataFrame, boot: TauReplicates, basis: str, level: float) -> list[Claim]:
    gap = _gap_claim(name, tau, boot, basis, level)
    return ([gap] if gap else []) + [_fall_claim(name, tau, boot, basis, level)]


def _trained_claims_one(
    name: str, tau: pd.DataFrame, boot: TauReplicates | None, basis: str, level: float
) -> list[Claim]:
    """The Sec. 4.2 / Fig. 4-5 claims on one (dataset, seed) tau-by-depth table; ``name`` labels it."""
    if _tau_at(tau, "micro", "mrr").empty or boot is None or not boot.depths:
        return [
            Claim(f"s4.{name}.fig3_sparsity_changes_rankings", "Sec. 4.2: label sparsity changes system rankings",
                  "tau < 1", "", "", NOT_CHECKABLE, "no pooled level in the tau table", basis=basis)
        ]
    return [_fig3_claim(name, tau, boot, basis, level)] + _fig5_claims(name, tau, boot, basis, level)


def trained_claims(
    taus: Mapping[str, pd.DataFrame],
    replicates: Mapping[str, TauReplicates],
    simulated: Collection[str] = (),
    level: float = 0.95,
) -> list[Claim]:
    """S4's Sec. 4.2 claims on this tier's systems: one set per (dataset, seed) tau-by-depth table.

    :param taus: label (``<dataset>_<seed>``) -> :func:`kgeval.studies.s4.analysis.tau_by_depth` table
    :param replicates: label -> the bootstrap replicates of its taus (:mod:`kgeval.studies.s4.tau_bootstrap`)
    :param simulated: the labels whose pooled labels are simulated (basis :data:`SIMULATED_POOLING`)
    :param level: coverage of the intervals
    """
    rows = []
    for name, tau in sorted(taus.items()):
        basis = SIMULATED_POOLING if name in simulated else MEASURED
        rows += _trained_claims_one(name.lower().replace("-", "_"), tau, replicates.get(name), basis, level)
    return rows


def category_claims(name: str, table3: GroupTaus, table4: GroupTaus, basis: str, level: float = 0.95) -> list[Claim]:
    """The Table 3 and Table 4 rules (:mod:`kgeval.studies.s4.category_claims`) on one label set's resampled taus."""
    added = int(sum(b - a for cell, (a, b) in zip(table3.groups, table3.answers, strict=True) if cell[1] == "1-1"))
    sparse = {metric: tau for (distribution, metric), tau in table4.taus(level).items() if distribution == "sparse"}
    return table3_claims(name, table3.taus(level), added, table3.unit, basis) + [
        table4_claim(name, sparse, table4.unit, basis)
    ]


def write_trained_claims(
    *,
    paths: Mapping[str, Mapping[str, str | os.PathLike]],
    hits_at: Sequence[int],
    ir_cutoff: int,
    uncertainty: Mapping[str, Any],
    simulated: Collection[str],
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Read each label set's tables (``paths``: ``taus``, ``answers``, ``questions`` and, where given,
    ``stability`` and ``discriminative`` -> label -> path), resample the components of linked questions of each
    label set (``uncertainty``: the config section, ``resamples``, ``level``, ``seed``) and write ``claims/s4.tsv``:
    the Sec. 4.2 claims, those on Tables 3 and 4 where ``categories`` (label -> category table) is given, and the
    Sec. 5.2 claims on the metrics (:mod:`kgeval.studies.s4.metric_claims`)."""
    taus = {name: read_tsv(path) for name, path in paths["taus"].items()}
    replicates = {}
    for name in taus:
        replicates[name] = compute_tau_replicates(
            pd.read_parquet(paths["answers"][name]),
            pd.read_parquet(paths["questions"][name]),
            metrics=CLAIM_METRICS,
            hits_at=hits_at,
            ir_cutoff=ir_cutoff,
            resamples=int(uncertainty["resamples"]),
            seed=stream_seed(int(uncertainty["seed"]), "s4", "questions", name),
        )
    level = float(uncertainty["level"])
    rows = trained_claims(taus, replicates, simulated, level)
    for name in sorted(taus):
        # Figs. 7 and 8 read the dataset's own test labels (level original): no pooled label enters them
        label = name.lower().replace("-", "_")
        if name in paths.get("categories", {}):
            categories = read_tsv(paths["categories"][name]).set_index("relation")["category"]
            groups = compute_group_taus(
                pd.read_parquet(paths["answers"][name]), pd.read_parquet(paths["questions"][name]), categories,
                hits_at=hits_at, ir_cutoff=ir_cutoff, resamples=int(uncertainty["resamples"]),
                seed=stream_seed(int(uncertainty["seed"]), "s4", "categories", name),
            )
            rows += category_claims(label, *groups, SIMULATED_POOLING if name in simulated else MEASURED, level)
        if name in paths.get("stability", {}):
            rows.append(stability_claim(label, read_tsv(paths["stability"][name]), MEASURED, level))
        if name in paths.get("discriminative", {}):
            rows.append(discrimination_claim(label, read_tsv(paths["discriminative"][name]), MEASURED))
    return write_claims(rows, out)
