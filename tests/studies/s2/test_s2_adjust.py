"""S2 adjustment of a published value after the fact (``kgeval adjust``), against PyKEEN's adjusted metrics and
z-scores on rank vectors with the same candidate counts."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
import pytest
from pykeen.metrics.ranking import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedHitsAtK,
    AdjustedInverseHarmonicMeanRank,
    ZArithmeticMeanRank,
    ZHitsAtK,
    ZInverseHarmonicMeanRank,
)

from kgeval.io import write_tsv
from kgeval.metrics import compute_metrics, expectations_table
from kgeval.studies.s2.adjust import AdjustmentError, add_subparser, adjust_value, format_adjustment

#: 6 ranking tasks with different numbers of candidates; the ranks of a hypothetical model
NUM_CANDIDATES = np.array([10, 10, 25, 40, 7, 100])
RANKS = np.array([1.0, 3.0, 2.0, 17.0, 7.0, 5.0])


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    ranks = pd.DataFrame({"side": ["head", "tail"] * 3, "num_candidates": NUM_CANDIDATES})
    return expectations_table(ranks, "toy", "test", metrics=["mr", "mrr", "hits@10"], num_samples=50)


@pytest.mark.parametrize(
    "metric, value, adjusted, z, keys",
    [
        ("mr", RANKS.mean(), AdjustedArithmeticMeanRankIndex(), ZArithmeticMeanRank(), ("amri", "amr", "zmr")),
        ("mrr", np.mean(1 / RANKS), AdjustedInverseHarmonicMeanRank(), ZInverseHarmonicMeanRank(), ("amrr", "zmrr")),
        ("hits@10", np.mean(RANKS <= 10), AdjustedHitsAtK(k=10), ZHitsAtK(k=10), ("ah@10", "zh@10")),
    ],
)
def test_adjustment_matches_pykeen(table, metric, value, adjusted, z, keys):
    adj = adjust_value(table, "toy", "test", metric, value)
    assert (adj.dataset, adj.split, adj.side, adj.metric, adj.n_ranks) == ("toy", "test", "both", metric, 6)
    derived = {key: v for key, _, v in adj.derived}
    assert tuple(derived) == keys
    assert derived[keys[0]] == pytest.approx(adjusted(RANKS, NUM_CANDIDATES))
    assert derived[keys[-1]] == pytest.approx(z(RANKS, NUM_CANDIDATES))
    if metric == "mr":  # AMR = MR / E[MR], E[MR] = mean((N + 1) / 2)
        assert derived["amr"] == pytest.approx(RANKS.mean() / np.mean((NUM_CANDIDATES + 1) / 2))


def test_one_side(table):
    head = NUM_CANDIDATES[0::2]
    adj = adjust_value(table, "toy", "test", "mr", 2.0, side="head")
    assert adj.n_ranks == 3 and adj.expectation == pytest.approx(np.mean((head + 1) / 2))
    assert adj.variance == pytest.approx(np.sum((head**2 - 1) / 12) / 9)


def test_adjusted_metrics_remove_size_dependence_of_a_fixed_quality_model():
    """A model that always ranks the truth at the same quantile: MRR falls with size, AMRI does not.

    For rank = ceil(q N) with N large, AMRI = 1 - (MR - 1)/(E[MR] - 1) tends to 1 - 2q, whatever N.
    """
    q = 0.1
    values = {}
    for n_cand in (500, 5000, 50000):
        nc = np.full(40, n_cand)
        r = np.ceil(q * nc).astype(float)
        ranks = pd.DataFrame(
            {"side": "head", "num_candidates": nc}
            | {f"rank_{t}": r for t in ("optimistic", "realistic", "pessimistic", "nondeterministic")}
        )
        table = compute_metrics(ranks, metrics=["mrr", "amri"])
        values[n_cand] = table.query("side == 'both' and rank_type == 'realistic'").set_index("metric")["value"]
        assert values[n_cand]["amri"] == pytest.approx(1 - (np.ceil(q * n_cand) - 1) / ((n_cand + 1) / 2 - 1))
    assert values[500]["mrr"] > 5 * values[5000]["mrr"] > 25 * values[50000]["mrr"]
    for n_cand in values:
        assert values[n_cand]["amri"] == pytest.approx(1 - 2 * q, abs=0.005)


def test_adjusting_a_reported_mr_gives_the_metric_of_the_ranks():
    """The same fixed-quality model: adjusting its reported MR after the fact gives the AMRI computed from its ranks."""
    for n_cand in (500, 5000):
        nc = np.full(40, n_cand)
        r = np.full(40, np.ceil(0.1 * n_cand))
        ranks = pd.DataFrame({"side": "head", "num_candidates": nc}
                             | {f"rank_{t}": r for t in ("optimistic", "realistic", "pessimistic", "nondeterministic")})
        metrics = compute_metrics(ranks, metrics=["amri"])
        amri = metrics.query("side == 'both' and rank_type == 'realistic'")["value"].item()
        expect = expectations_table(ranks, "q", "test", metrics=["mr"], num_samples=10)
        adj = adjust_value(expect, "q", "test", "mr", float(r.mean()))
        assert {k: v for k, _, v in adj.derived}["amri"] == pytest.approx(amri)


def test_undefined_adjustments_are_nan():
    """One candidate per task: E[MR] = 1 = the optimum and V = 0, so neither the index nor the z-score exists."""
    table = pd.DataFrame(
        {"dataset": "one", "split": "test", "side": "both", "metric": ["mr"], "n_ranks": [3], "expectation": [1.0],
         "variance": [0.0]}
    )
    adj = adjust_value(table, "one", "test", "mr", 1.0)
    derived = {k: v for k, _, v in adj.derived}
    assert math.isnan(derived["amri"]) and math.isnan(derived["zmr"]) and derived["amr"] == 1.0
    assert adj.method == ""  # the table has no method column


def test_errors_name_what_is_known(table):
    with pytest.raises(AdjustmentError, match="unknown dataset 'fb'; the expectations table has: toy"):
        adjust_value(table, "fb", "test", "mr", 1.0)
    with pytest.raises(AdjustmentError, match="unknown split 'valid' for dataset 'toy'; known: test"):
        adjust_value(table, "toy", "valid", "mr", 1.0)
    with pytest.raises(AdjustmentError, match="unknown side 'left'; known: both, head, tail"):
        adjust_value(table, "toy", "test", "mr", 1.0, side="left")
    with pytest.raises(AdjustmentError, match="unknown metric 'gmr'; known base metrics: mr, mrr, hits@10"):
        adjust_value(table, "toy", "test", "gmr", 1.0)
    extended = pd.concat([table, table[table["metric"] == "mrr"].assign(metric="amrr")], ignore_index=True)
    with pytest.raises(AdjustmentError, match="'amrr' is not a base metric \\(it adjusts 'mrr'; pass --metric mrr\\)"):
        adjust_value(extended, "toy", "test", "amrr", 0.5)
    assert issubclass(AdjustmentError, ValueError)


def test_format_lists_the_values_tab_separated(table):
    adj = adjust_value(table, "toy", "test", "mrr", 0.4)
    lines = format_adjustment(adj).splitlines()
    assert lines[0].startswith("# toy test side=both: n_ranks=6, E[mrr]=") and lines[0].endswith("(closed_form)")
    assert lines[1] == "mrr\t0.4\tgiven"
    parsed = [line.split("\t") for line in lines[2:]]
    assert [(key, description) for key, _, description in parsed] == [("amrr", "adjusted index"), ("zmrr", "z-score")]
    for (key, value, _), (_, _, want) in zip(parsed, adj.derived):
        assert float(value) == pytest.approx(want, rel=1e-9)


def test_command_line(table, tmp_path, capsys):
    write_tsv(table, tmp_path / "expectations.tsv")
    parser = argparse.ArgumentParser()
    add_subparser(parser.add_subparsers())
    args = parser.parse_args(["adjust", "--dataset", "toy", "--metric", "mr", "--value", "4",
                              "--table", str(tmp_path / "expectations.tsv")])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    want = AdjustedArithmeticMeanRankIndex()(np.full(6, 4.0), NUM_CANDIDATES)
    amri = [line.split("\t")[1] for line in out.splitlines() if line.startswith("amri\t")]
    assert float(amri[0]) == pytest.approx(want, rel=1e-9)
    args = parser.parse_args(["adjust", "--dataset", "nope", "--metric", "mr", "--value", "4",
                              "--table", str(tmp_path / "expectations.tsv")])
    assert args.func(args) == 2 and "unknown dataset 'nope'" in capsys.readouterr().err
    args = parser.parse_args(["adjust", "--dataset", "toy", "--metric", "mr", "--value", "4",
                              "--table", str(tmp_path / "missing.tsv")])
    assert args.func(args) == 2 and "not found" in capsys.readouterr().err
