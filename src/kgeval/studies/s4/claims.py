"""S4's claims on this tier's own systems (study_s4: trained models, sparse labels and their pooled completions):
the Sec. 4.2 / Fig. 3-5 claims of Zhou et al. 2022 per dataset and seed.

The claims on the authors' released results are in :mod:`kgeval.studies.s4.released_claims`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, ordinal_claim, write_claims
from kgeval.io import read_tsv
from kgeval.studies.s4.paper import PAPER_FIG5_GAPS

__all__ = ["trained_claims", "write_trained_claims"]




def _tau_at(tau: pd.DataFrame, family: str, metric: str) -> pd.Series:
    """tau against the sparse labels by pooling depth (1..), of one family and metric."""
    part = tau.loc[(tau["family"] == family) & (tau["metric"] == metric) & (tau["depth"] >= 1)]
    return part.set_index("depth")["tau"].astype(float).sort_index()


def _trained_claims_one(name: str, tau: pd.DataFrame) -> list[Claim]:
    """The Sec. 4.2 / Fig. 4-5 claims on one (dataset, seed) tau-by-depth table; ``name`` labels it."""
    rows = []
    micro_mrr = _tau_at(tau, "micro", "mrr")
    if micro_mrr.empty:
        return [
            Claim(f"s4.{name}.fig3_sparsity_changes_rankings", "Sec. 4.2: label sparsity changes system rankings",
                  "tau < 1", "", "", NOT_CHECKABLE, "no pooled level in the tau table")
        ]
    deepest = int(micro_mrr.index.max())
    value = float(micro_mrr.loc[deepest])
    rows.append(
        ordinal_claim(
            f"s4.{name}.fig3_sparsity_changes_rankings",
            "Sec. 4.2, Fig. 3: label sparsity changes system rankings: micro MRR rankings on the sparse and the pooled "
            "labels differ (Kendall's tau < 1)",
            "tau -0.2308 (FB-Test-S vs FB-Test-S-C, 13 systems)",
            f"tau {value:.4f} at pooling depth {deepest} ({int(tau['num_systems'].max())} systems)",
            value < 1,
            reason="" if value < 1 else "the pooled labels leave the micro-MRR ranking of these systems unchanged",
            tolerance="tau < 1",
        )
    )
    micros, gaps, everywhere = {}, {}, {}
    for metric in ("mrr", "hits@10"):
        micro, macro = _tau_at(tau, "micro", metric), _tau_at(tau, "macro", metric)
        both = pd.concat({"micro": micro, "macro": macro}, axis=1).dropna()
        if both.empty:
            continue
        micros[metric] = micro
        gaps[metric] = float(both["macro"].iloc[-1] - both["micro"].iloc[-1])
        everywhere[metric] = int((both["macro"] >= both["micro"]).sum()), len(both)
    falls = {m: float(micro.iloc[-1]) <= float(micro.iloc[0]) for m, micro in micros.items()}
    if gaps:
        ok = all(g >= 0 for g in gaps.values())
        text = "; ".join(
            f"{m}: macro - micro {gaps[m]:+.4f} at depth {deepest} (macro >= micro at {everywhere[m][0]} of "
            f"{everywhere[m][1]} depths)"
            for m in gaps
        )
        rows.append(
            ordinal_claim(
                f"s4.{name}.fig5_macro_more_stable_than_micro",
                "Sec. 4.2, Fig. 5: system rankings by macro metrics change less between sparse and pooled labels than "
                "by micro metrics (higher tau), for MRR and Hits@10",
                "; ".join(f"{m}: gap +{g:.2f} at depth 10" for m, g in PAPER_FIG5_GAPS.items()),
                text,
                ok,
                reason=""
                if ok
                else "on these systems the macro ranking moves at least as much as the micro one at the deepest pool",
                tolerance="macro tau >= micro tau at the deepest depth, MRR and Hits@10",
            )
        )
        ok_falls = all(falls.values())
        rows.append(
            ordinal_claim(
                f"s4.{name}.fig5_tau_falls_with_depth",
                "Sec. 4.2, Fig. 5: the correlations decrease as the pooling depth increases (micro MRR and Hits@10)",
                "decreasing with depth",
                "; ".join(
                    f"{m}: tau {float(micro.iloc[0]):.4f} at depth {int(micro.index[0])} -> "
                    f"{float(micro.iloc[-1]):.4f} at depth {deepest}"
                    for m, micro in micros.items()
                ),
                ok_falls,
                reason="" if ok_falls else "tau at the deepest pool is above tau at the shallowest",
                tolerance="tau(deepest) <= tau(shallowest)",
            )
        )
    return rows


def trained_claims(taus: Mapping[str, pd.DataFrame]) -> list[Claim]:
    """S4's Sec. 4.2 claims on this tier's systems: one set per (dataset, seed) tau-by-depth table.

    :param taus: label (``<dataset>_<seed>``, lower case) -> :func:`kgeval.studies.s4.analysis.tau_by_depth` table
    """
    rows = []
    for name, tau in sorted(taus.items()):
        rows += _trained_claims_one(name.lower().replace("-", "_"), tau)
    return rows


def write_trained_claims(tau_paths: Mapping[str, str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """Read the tau-by-depth tables (label -> path) and write ``claims/s4.tsv``."""
    return write_claims(trained_claims({name: read_tsv(path) for name, path in tau_paths.items()}), out)
