"""S1's claims (Berrendorf et al., paper 000) checked on this tier's tables.

- Sec. 4, Fig. 1 (the EA test-size sweep): :mod:`kgeval.studies.s1.testsize_claims`, judged on the sweeps' ranks with
  joint bootstrap replicates (:mod:`kgeval.studies.s1.testsize_replicates`);
- ``s1.amr_random_scorer_is_one`` (Sec. 3): a random scorer's AMR is 1 up to 3 standard deviations of its closed
  form, from the reference-scorer table of ``study_s1_ranks``. True by construction (basis and verdict ``by
  construction``): its ranks are uniform on 1..N, the distribution E[MR] assumes. Its criterion (3 closed-form std)
  already is a random scorer's sampling noise, so it is judged at the point as a z-test, ``z = (AMR - 1) / std``: the
  ``interval`` column shows each dataset's z, the one quantity judged, and the value +- 1.96 std only as context;
- ``s1.optimistic_rank_favours_ties`` (Sec. 3.1, the paper's reason for the realistic rank): the constant scorer, which
  ties every candidate, gets a perfect optimistic MRR and Hits@1 while its realistic AMR is a random scorer's 1. True by
  construction (a tie puts the true entity first under the optimistic rank); the row also states how far the rank
  types of the trained models lie apart (``rank_types.tsv``), i.e. whether the choice matters for them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, by_construction, format_interval, format_value, ordinal_claim
from kgeval.claims import write_claims
from kgeval.io import read_tsv
from kgeval.studies.s1.testsize_claims import sweep_basis, sweep_claims
from kgeval.studies.s1.testsize_replicates import SweepReplicates, sweep_replicates
from kgeval.uncertainty.resampling import BootstrapSettings

__all__ = ["RANDOM_SCORER", "TIES", "SweepSetup", "s1_claims", "write_s1_claims"]

#: the basis of the random-scorer claim
RANDOM_SCORER = by_construction(
    "a uniformly random scorer's realistic ranks are uniform on 1..N, the distribution E[MR] assumes, so its AMR is 1 "
    "in expectation whatever the data: a check of the implementation, not evidence for the paper"
)
#: the basis of the optimistic-rank claim
TIES = by_construction(
    "the optimistic rank puts the true entity first among the candidates that tie with it, so a model that ties "
    "every candidate gets rank 1 by definition"
)


def _missing(claim: str, statement: str, paper: str, what: str) -> Claim:
    return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, what)


def _random_claim(reference: pd.DataFrame | None) -> Claim:
    claim = "s1.amr_random_scorer_is_one"
    statement = "Sec. 3: AMR = MR / E[MR] is 1 in expectation for a random scorer, on any dataset"
    paper = "1"
    if reference is None:
        return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, "study_s1_ranks is not part of this tier")
    rows = reference.loc[
        (reference["scorer"] == "random") & (reference["metric"] == "amr") & (reference["side"] == "both")
    ]
    if rows.empty:
        return Claim(claim, statement, paper, "", "", NOT_CHECKABLE, "the reference table has no random-scorer AMR")
    signed = ((rows["value"] - 1.0) / rows["expected_std"]).to_numpy(float)
    z = np.abs(signed)
    values = "; ".join(f"{r.dataset} {r.value:.4f}" for r in rows.itertuples())
    ok = bool((z <= 3).all())
    largest = format_value(float(z.max()), 2)
    judged = "; ".join(f"{r.dataset} z = {v:+.2f}" for r, v in zip(rows.itertuples(), signed))
    context = "; ".join(
        f"{r.dataset} {format_interval(r.value - 1.96 * r.expected_std, r.value + 1.96 * r.expected_std)}"
        for r in rows.itertuples()
    )
    return ordinal_claim(
        claim,
        statement,
        paper,
        f"random-scorer AMR: {values}; max |AMR - 1| / std = {largest}",
        holds=ok,
        reason=f"max |z| = {largest} {'<=' if ok else '>'} 3"
        + ("" if ok else ": a random scorer's AMR is more than 3 closed-form standard deviations from 1"),
        tolerance="|AMR - 1| <= 3 std (closed form) on every dataset",
        interval=f"{judged} (judged: |z| <= 3 at the point, z = (AMR - 1) / std with the closed-form std of a random "
        f"scorer's AMR, its sampling noise; not resampled); AMR +- 1.96 std as context: {context}",
        basis=RANDOM_SCORER,
    )


def _ties_claim(reference: pd.DataFrame | None, rank_types: pd.DataFrame | None) -> Claim:
    claim = "s1.optimistic_rank_favours_ties"
    statement = (
        "Sec. 3.1: the optimistic rank gives models that assign the same score to many candidates an unfair advantage"
    )
    paper = "a model tying every candidate gets optimistic rank 1"
    if reference is None:
        return _missing(claim, statement, paper, "study_s1_ranks is not part of this tier")
    both = reference.loc[(reference["scorer"] == "constant") & (reference["side"] == "both")]
    pick = lambda rank_type, metric: both.loc[  # noqa: E731
        (both["rank_type"] == rank_type) & (both["metric"] == metric), ["dataset", "value"]
    ].set_index("dataset")["value"]
    mrr, hits, amr = pick("optimistic", "mrr"), pick("optimistic", "hits@1"), pick("realistic", "amr")
    if mrr.empty or amr.empty:
        return _missing(claim, statement, paper, "the reference table has no constant-scorer rows")
    favoured = bool((mrr == 1.0).all() and (hits == 1.0).all())
    text = "; ".join(f"{d}: optimistic MRR {mrr[d]:.4f}, Hits@1 {hits.get(d, float('nan')):.4f}, realistic AMR "
                     f"{amr.get(d, float('nan')):.4f}" for d in sorted(mrr.index))
    spread = ""
    if rank_types is not None and not rank_types.empty:
        part = rank_types.loc[(rank_types["metric"] == "mrr") & (rank_types["side"] == "both")]
        if not part.empty:
            spread = (f"; the trained models' MRR differs between the optimistic and the pessimistic rank by at most "
                      f"{part['rel_spread'].max():.2g} (relative) over {len(part)} runs: they hardly tie, so the "
                      "rank type changes nothing for them")
    return ordinal_claim(
        claim, statement, paper, f"constant scorer (ties every candidate): {text}{spread}",
        holds=favoured,
        reason="the constant scorer's optimistic MRR and Hits@1 are 1 on every dataset, its realistic AMR a random "
        "scorer's" if favoured else "the constant scorer's optimistic MRR or Hits@1 is below 1",
        tolerance="optimistic MRR = Hits@1 = 1 for the constant scorer",
        interval="exact: computed without sampling (the constant scorer's ranks do not vary)",
        basis=TIES,
    )


@dataclass(frozen=True)
class SweepSetup:
    """What the sweeps were run with, for the Fig. 1 claims' basis: the swept ``ea_datasets`` entries, the
    ``ea_models.gcn_align`` entry and the number of split seeds."""

    datasets: Mapping[str, Mapping[str, Any]]
    model: Mapping[str, Any]
    seeds: int


def s1_claims(
    sweeps: Mapping[tuple[str, int], SweepReplicates],
    setup: SweepSetup,
    reference: pd.DataFrame | None = None,
    rank_types: pd.DataFrame | None = None,
    level: float = 0.95,
) -> list[Claim]:
    """The S1 claims (module docstring) from the sweeps (:func:`kgeval.studies.s1.testsize_replicates.sweep_replicates`),
    their setup, the reference-scorer table and the rank-types table."""
    basis = sweep_basis(setup.datasets, setup.model, setup.seeds)
    return [
        *sweep_claims(sweeps, level, basis),
        _random_claim(reference),
        _ties_claim(reference, rank_types),
    ]


def write_s1_claims(
    ranks_paths: Sequence[str | os.PathLike],
    setup: SweepSetup,
    out: str | os.PathLike,
    uncertainty: Mapping[str, float],
    reference_path: str | os.PathLike | None = None,
    rank_types_path: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Read the sweeps' ranks (``.../testsize/<pair>/<num_train>/<seed>/ranks.parquet``, resampled as the config's
    ``uncertainty`` section says), the reference and rank-types tables, and write ``claims/s1.tsv``."""
    settings = BootstrapSettings.from_config(uncertainty)
    sweeps = sweep_replicates(ranks_paths, settings) if ranks_paths else {}
    reference = read_tsv(reference_path) if reference_path else None
    rank_types = read_tsv(rank_types_path) if rank_types_path else None
    return write_claims(s1_claims(sweeps, setup, reference, rank_types, settings.level), out)
