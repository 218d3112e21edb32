"""S1 part A: the rank-types table of the trained models, its settings, and the study's tables end to end.

The rank definitions, the reference scorers, the reference-scorer table and the permutation study have their own
files (test_s1_split_ranks.py, test_s1_reference_scorers.py, test_s1_reference_table.py, test_s1_permutations.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.metrics import compute_metrics
from kgeval.studies.s1.rank_type_figures import write_rank_types_figure
from kgeval.studies.s1.rank_types import ORIGINAL_ORDER, rank_types_table
from kgeval.studies.s1.split_ranks import rank_split
from s1_samples import EVAL, KNOWN, TableScorer


def test_rank_types_table_hand_made():
    rows = []
    for model, values in (("a", (1.0, 2.0, 3.0, 2.5)), ("b", (4.0, 4.0, 4.0, 4.0))):
        for rank_type, value in zip(("optimistic", "realistic", "pessimistic", "nondeterministic"), values):
            rows.append(("d", model, 0, "test", "both", rank_type, "mr", value))
    rows.append(("d", "a", 0, "test", "both", "realistic", "amr", 0.5))  # realistic only: left out
    metrics = pd.DataFrame(rows, columns=["dataset", "model", "seed", "split", "side", "rank_type", "metric", "value"])
    table = rank_types_table(metrics)
    assert list(table["metric"]) == ["mr", "mr"]
    a, b = table.iloc[0], table.iloc[1]
    assert (a["optimistic"], a["nondeterministic"], a["spread"], a["rel_spread"]) == (1.0, 2.5, 2.0, 1.0)
    assert (b["spread"], b["rel_spread"]) == (0.0, 0.0)
    assert list(rank_types_table(metrics, models=["b"])["model"]) == ["b"]
    with pytest.raises(ValueError, match="no rows for model"):
        rank_types_table(metrics, models=["c"])
    with pytest.raises(ValueError, match="missing columns"):
        rank_types_table(metrics.drop(columns="side"))


def test_rank_types_table_from_tied_ranks_and_figures(tmp_path):
    """On ranks of a tied scorer: MR is linear, so realistic MR is the mean of optimistic and pessimistic MR."""
    scorer = TableScorer(6, levels=2)
    ranks = rank_split(scorer, EVAL, KNOWN)
    metrics = compute_metrics(ranks)
    for column, value in (("split", "test"), ("seed", 0), ("model", "ties"), ("dataset", "hand")):
        metrics.insert(0, column, value)
    table = rank_types_table(metrics)
    mr = table[(table["metric"] == "mr") & (table["side"] == "both")].iloc[0]
    assert mr["realistic"] == pytest.approx((mr["optimistic"] + mr["pessimistic"]) / 2)
    assert mr["optimistic"] <= mr["nondeterministic"] <= mr["pessimistic"]
    assert mr["spread"] > 0
    assert {"mr", "mrr", "hits@1", "hits@10"} <= set(table["metric"])
    assert "amr" not in set(table["metric"])

    table.to_csv(tmp_path / "rank_types.tsv", sep="\t", index=False)
    write_rank_types_figure(tmp_path / "rank_types.tsv", None, tmp_path / "f.pdf", tmp_path / "f.png", "test", "both",
                            ["mr", "mrr"])
    assert (tmp_path / "f.pdf").stat().st_size > 0 and (tmp_path / "f.png").stat().st_size > 0


def test_study_settings_resolve_and_reject(repo):
    from kgeval.config import load_config
    from kgeval.studies.s1.rank_types import study_settings

    config = load_config(repo / "config" / "test.yaml", check_pykeen=False)
    settings = study_settings(config)
    assert settings["datasets"] == list(config["datasets"]) and settings["models"] == list(config["models"])
    for key, value, match in (
        ("models", ["nope"], "studies.s1.ranks.models"),
        ("split", "valid", None),
        ("figure_metrics", ["amr"], "realistic rank only"),
        ("permutation_metrics", ["mrrr"], "studies.s1.ranks.permutation_metrics"),
    ):
        changed = {**config, "studies": {**config["studies"], "s1": {**config["studies"]["s1"]}}}
        changed["studies"]["s1"]["ranks"] = {**settings, key: value}
        if match is None:  # valid is ranked in the test config
            assert study_settings(changed)[key] == value
        else:
            with pytest.raises(ValueError, match=match):
                study_settings(changed)


@pytest.mark.slow
def test_workflow_s1_ranks_tables(test_workflow):
    """The tables behind study_s1_ranks, from the end-to-end run on config/test.yaml."""
    from kgeval.io import read_tsv

    results = test_workflow / "results" / "test"
    metrics = read_tsv(results / "tables" / "metrics.tsv")
    rank_types = read_tsv(results / "s1" / "ranks" / "tables" / "rank_types.tsv")
    reference = read_tsv(results / "s1" / "ranks" / "tables" / "reference_scorers.tsv")
    permutations = read_tsv(results / "s1" / "ranks" / "tables" / "permutations.tsv")
    for name in ("rank_types", "permutations"):
        for suffix in ("pdf", "png"):
            assert (results / "s1" / "ranks" / "figures" / f"{name}.{suffix}").stat().st_size > 0

    # every trained model is in the rank-types table, and its values are those of metrics.tsv
    runs = set(map(tuple, metrics[["dataset", "model", "seed"]].drop_duplicates().to_numpy()))
    assert set(map(tuple, rank_types[["dataset", "model", "seed"]].drop_duplicates().to_numpy())) == runs
    mr = metrics[(metrics["metric"] == "mr") & (metrics["side"] == "both") & (metrics["split"] == "test")]
    wide = mr.pivot(index=["dataset", "model", "seed"], columns="rank_type", values="value")
    ours = rank_types[(rank_types["metric"] == "mr") & (rank_types["side"] == "both") & (rank_types["split"] == "test")]
    ours = ours.set_index(["dataset", "model", "seed"])
    np.testing.assert_allclose(ours["pessimistic"], wide.loc[ours.index, "pessimistic"])
    np.testing.assert_allclose(ours["spread"], wide.loc[ours.index].max(axis=1) - wide.loc[ours.index].min(axis=1))

    # the constant scorer gets exactly the prescribed ranks
    const = reference[reference["scorer"] == "constant"]
    assert len(const) and (const["max_rank_deviation"] == 0).all()
    np.testing.assert_allclose(const["value"], const["expected"])

    # permutations: realistic never moves; under the original IDs the models' non-deterministic metrics equal the
    # pipeline's (compute_ranks -> metrics.tsv), computed by a different path through the engine
    assert (permutations[permutations["rank_type"] == "realistic"]["change"] == 0).all()
    models = permutations[(permutations["kind"] == "model") & (permutations["order"] == ORIGINAL_ORDER)]
    assert set(map(tuple, models[["dataset", "scorer", "seed"]].drop_duplicates().to_numpy())) == runs
    pipeline = metrics.rename(columns={"model": "scorer"}).set_index(
        ["dataset", "scorer", "seed", "split", "side", "rank_type", "metric"]
    )["value"]
    keyed = models.set_index(["dataset", "scorer", "seed", "split", "side", "rank_type", "metric"])["value"]
    np.testing.assert_allclose(keyed.to_numpy(), pipeline.loc[keyed.index].to_numpy(), rtol=1e-9)
