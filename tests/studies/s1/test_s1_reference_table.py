"""S1 reference-scorer table: the constant and the random scorer next to their theoretical values, on tiny data."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.io import read_tsv
from kgeval.studies.s1.reference_scorers import ConstantScorer
from kgeval.studies.s1.reference_table import reference_scorer_table, write_reference_scorer_table
from s1_samples import TINY_SPEC, brute_force_frame, tiny_data


def _sizes(tiny, sides=("head", "tail")):
    triples = tiny.testing.mapped_triples.numpy()
    known = np.concatenate([t.numpy() for t in tiny.all_mapped_triples()])
    return brute_force_frame(ConstantScorer(tiny.num_entities), triples, known, sides=sides)["num_candidates"].to_numpy()


def _row(table, scorer, rank_type, metric, side="both"):
    row = table[(table["scorer"] == scorer) & (table["rank_type"] == rank_type) & (table["metric"] == metric)
                & (table["side"] == side)]
    assert len(row) == 1, (scorer, rank_type, metric, side)
    return row.iloc[0]


def test_reference_scorer_table_on_tiny_data():
    tiny = tiny_data()
    metrics = ["mr", "mrr", "hits@1", "amr"]
    table = reference_scorer_table(tiny, "tiny", "test", metrics, random_seed=0)
    assert set(table["scorer"]) == {"constant", "random"}
    # brute-force candidate counts
    sizes = _sizes(tiny)

    def value(scorer, rank_type, metric, side="both"):
        return _row(table, scorer, rank_type, metric, side)

    const = table[table["scorer"] == "constant"]
    assert (const["max_rank_deviation"] == 0).all()
    np.testing.assert_allclose(const["value"], const["expected"])
    assert value("constant", "optimistic", "mr")["value"] == 1.0
    assert value("constant", "pessimistic", "mr")["value"] == pytest.approx(sizes.mean())
    assert value("constant", "realistic", "mr")["value"] == pytest.approx(((sizes + 1) / 2).mean())
    assert value("constant", "realistic", "amr")["value"] == pytest.approx(1.0)
    # the random scorer: no ties, so every rank type gives the same value; its expectation is E[MR] = mean((|S|+1)/2)
    for metric in ("mr", "mrr", "hits@1"):
        values = {t: value("random", t, metric)["value"] for t in ("optimistic", "realistic", "pessimistic",
                                                                   "nondeterministic")}
        assert len(set(values.values())) == 1, values
    assert value("random", "realistic", "mr")["expected"] == pytest.approx(((sizes + 1) / 2).mean())
    assert value("random", "realistic", "mr")["expected_from"] == "uniform_ranks"


def test_random_scorer_moments_are_the_uniform_closed_forms():
    """Per side, E and SD of MR, MRR and Hits@1 of independent ranks uniform on 1..|S|, written out here."""
    tiny = tiny_data()
    table = reference_scorer_table(tiny, "tiny", "test", ["mr", "mrr", "hits@1"], random_seed=1, num_samples=50)
    for side, sides in (("head", ("head",)), ("tail", ("tail",)), ("both", ("head", "tail"))):
        n = _sizes(tiny, sides).astype(float)
        m = len(n)
        harmonic = np.array([np.sum(1.0 / np.arange(1, k + 1)) for k in n.astype(int)])
        second = np.array([np.sum(1.0 / np.arange(1, k + 1) ** 2) for k in n.astype(int)])
        closed = {
            "mr": ((n + 1) / 2, (n**2 - 1) / 12),
            "mrr": (harmonic / n, second / n - (harmonic / n) ** 2),
            "hits@1": (1 / n, (1 / n) * (1 - 1 / n)),
        }
        for metric, (mean, variance) in closed.items():
            for rank_type in ("optimistic", "realistic", "pessimistic", "nondeterministic"):
                row = _row(table, "random", rank_type, metric, side)
                assert row["expected"] == pytest.approx(mean.mean(), rel=1e-9), (side, metric)
                assert row["expected_std"] == pytest.approx(np.sqrt(variance.sum()) / m, rel=1e-9), (side, metric)
                assert np.isnan(row["max_rank_deviation"])
            # the observed value is a plausible draw (a fixed seed: this either always holds or never does)
            row = _row(table, "random", "realistic", metric, side)
            assert abs(row["value"] - row["expected"]) <= 5 * row["expected_std"], (side, metric)
    const = table[table["scorer"] == "constant"]
    assert set(const["expected_from"]) == {"definition"} and (const["expected_std"] == 0).all()


def test_write_reference_scorer_table(tmp_path):
    out = tmp_path / "reference.tsv"
    written = write_reference_scorer_table({"tiny": TINY_SPEC}, None, out, "valid", ["mr", "hits@1"], random_seed=2)
    back = read_tsv(out)
    assert len(back) == len(written) and set(back["split"]) == {"valid"} and set(back["dataset"]) == {"tiny"}
    key = ["side", "scorer", "rank_type", "metric"]
    assert list(map(tuple, back[key].to_numpy())) == sorted(map(tuple, back[key].to_numpy()))  # sorted rows
    direct = reference_scorer_table(tiny_data(), "tiny", "valid", ["mr", "hits@1"], random_seed=2).set_index(key)
    np.testing.assert_allclose(back.set_index(key).loc[direct.index, "value"], direct["value"])
    with pytest.raises(ValueError, match="no datasets given"):
        write_reference_scorer_table({}, None, tmp_path / "x.tsv", "test", ["mr"])
