"""kgeval.lp.relation_metrics: the per-relation and per-category MRRs, weighted by their queries, average to the
overall MRR; the table and figure are written."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from kgeval.io import read_tsv
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranks import rank_triples
from kgeval.lp.relation_metrics import (
    COLUMNS,
    metrics_by_relation,
    metrics_by_relation_file,
    plot_categories,
)
from kgeval.lp.relation_categories import relation_categories
from kgeval.metrics import compute_metrics
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings

SETTINGS = BootstrapSettings.from_config({"resamples": 20, "permutations": 10, "level": 0.95, "seed": 0})
NATIONS = {"source": "pykeen", "name": "Nations"}


@pytest.fixture(scope="module")
def nations_ranks(tmp_path_factory):
    from pykeen.models import TransE

    folder = tmp_path_factory.mktemp("ranks")
    data = load_dataset("nations", NATIONS)
    paths = []
    for seed in (0, 1):
        model = TransE(triples_factory=data.training, embedding_dim=8, random_seed=seed).eval()
        path = folder / "nations" / f"transe{seed}" / "0" / "test.parquet"
        path.parent.mkdir(parents=True)
        rank_triples(data, model, data.factory("test").mapped_triples, str(path),
                     filter_triples=data.all_mapped_triples())
        paths.append(path)
    return data, paths


def test_query_weighted_relation_mrr_is_the_overall_mrr(nations_ranks):
    data, paths = nations_ranks
    ranks = pd.read_parquet(paths[0])
    triples = pd.DataFrame(
        data.training.triples, columns=["head", "relation", "tail"])
    table = metrics_by_relation(ranks, relation_categories(triples), ("nations", "test"), SETTINGS)
    overall = compute_metrics(ranks)
    for rank_type in ("realistic", "optimistic"):
        truth = overall[(overall["side"] == "both") & (overall["rank_type"] == rank_type)
                        & (overall["metric"] == "mrr")]["value"].item()
        for group in ("relation", "category"):
            rows = table[(table["group"] == group) & (table["side"] == "both") & (table["rank_type"] == rank_type)
                         & (table["metric"] == "mrr")]
            weights = 2 * rows["num_triples"]
            assert weights.sum() == len(ranks)
            assert np.average(rows["value"], weights=weights) == pytest.approx(truth, rel=1e-12)
    rows = table[(table["group"] == "category") & (table["metric"] == "mrr")]
    assert set(rows["relation"]) <= {"1-1", "1-N", "N-1", "M-N"}
    assert (rows["ci_low"] <= rows["value"] + 1e-12).all() and (rows["value"] <= rows["ci_high"] + 1e-12).all()
    assert rows["ci_method"].str.contains("test triples").all()


def test_table_and_figure_are_written(tmp_path, nations_ranks):
    _, paths = nations_ranks
    out = tmp_path / "metrics_by_relation.tsv"
    metrics_by_relation_file([str(p) for p in paths], out, {"nations": NATIONS}, None, SETTINGS)
    table = read_tsv(out)
    assert list(table.columns) == COLUMNS and set(table["model"]) == {"transe0", "transe1"}
    keys = ["dataset", "model", "seed", "split", "group", "relation", "side", "rank_type", "metric"]
    assert not table.duplicated(keys).any()
    assert table.equals(table.sort_values(keys, kind="stable").reset_index(drop=True))
    plot_categories(table, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").stat().st_size > 0 and (tmp_path / "f.png").stat().st_size > 0
