"""S1 part A: rank definitions on hand-made ties, the reference scorers, the permutation effect, and the study tables.

Every expected rank is obtained by brute force: list the candidates left after filtering, sort them with Python's
stable ``sorted`` (descending score, ties in ID order) and count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from kgeval.lp.datasets import LPData, load_dataset
from kgeval.metrics import compute_metrics
from kgeval.lp.ranking import rank_lp
from kgeval.studies.s1.reference_scorers import (
    ConstantScorer,
    PermutedScorer,
    RandomScorer,
    permute_triples,
    random_permutation,
)
from kgeval.studies.s1.permutations import permutation_table
from kgeval.studies.s1.rank_type_figures import write_permutations_figure, write_rank_types_figure
from kgeval.studies.s1.rank_types import ORIGINAL_ORDER, order_name, rank_types_table
from kgeval.studies.s1.reference_table import reference_scorer_table
from kgeval.studies.s1.split_ranks import constant_scorer_ranks, rank_split
from kgeval.lp.scoring import Scorer

RANK_COLUMNS = ["rank_optimistic", "rank_realistic", "rank_pessimistic", "rank_nondeterministic"]


class TableScorer(Scorer):
    """Scores with many ties: small integers drawn per query (seeded by the query), the same in every batch."""

    is_fast = False

    def __init__(self, num_entities: int, levels: int = 3, seed: int = 0) -> None:
        self.num_entities = num_entities
        self.levels = levels
        self.seed = seed
        self.device = torch.device("cpu")
        self.name = "table"

    def row(self, side: str, anchor: int, relation: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 0 if side == "head" else 1, int(anchor), int(relation)])
        return rng.integers(0, self.levels, self.num_entities).astype(np.float32)

    def score_tails(self, heads, relations):  # noqa: D102
        return torch.from_numpy(np.stack([self.row("tail", h, r) for h, r in zip(heads.tolist(), relations.tolist())]))

    def score_heads(self, relations, tails):  # noqa: D102
        return torch.from_numpy(np.stack([self.row("head", t, r) for t, r in zip(tails.tolist(), relations.tolist())]))


def brute_force_ranks(score_row, num_entities, true, excluded, permutation=None):
    """All four ranks of one query by enumeration; ``permutation`` relabels the IDs that break ties."""
    new_id = np.arange(num_entities) if permutation is None else np.asarray(permutation)
    kept = [j for j in range(num_entities) if j == true or j not in excluded]
    s = {j: float(score_row[j]) for j in kept}
    optimistic = 1 + sum(s[j] > s[true] for j in kept)
    pessimistic = sum(s[j] >= s[true] for j in kept)
    # a stable descending sort of the candidates listed in (new) ID order
    in_id_order = sorted(kept, key=lambda j: new_id[j])
    order = sorted(in_id_order, key=lambda j: -s[j])
    return {
        "rank_optimistic": optimistic,
        "rank_pessimistic": pessimistic,
        "rank_realistic": (optimistic + pessimistic) / 2,
        "rank_nondeterministic": order.index(true) + 1,
        "num_candidates": len(kept),
    }


def brute_force_frame(scorer, triples, known, permutation=None, sides=("head", "tail")):
    """Brute-force ranks of every triple and side, in the row order of :func:`rank_split`."""
    triples = np.asarray(triples)
    known = np.asarray(known)
    rows = []
    for side in sides:
        for h, r, t in triples:
            if side == "tail":
                anchor, true = h, t
                excluded = {int(k[2]) for k in known if k[0] == h and k[1] == r}
                score_row = scorer.score_tails(torch.tensor([h]), torch.tensor([r]))[0].numpy()
            else:
                anchor, true = t, h
                excluded = {int(k[0]) for k in known if k[2] == t and k[1] == r}
                score_row = scorer.score_heads(torch.tensor([r]), torch.tensor([t]))[0].numpy()
            del anchor
            rows.append({"side": side, **brute_force_ranks(score_row, scorer.num_entities, int(true), excluded,
                                                             permutation)})
    return pd.DataFrame(rows)


# a hand-made graph: 6 entities, 2 relations; several queries share answers, so filtering removes candidates
KNOWN = np.array(
    [[0, 0, 1], [0, 0, 2], [0, 0, 4], [3, 0, 2], [5, 1, 0], [5, 1, 3], [1, 1, 3], [2, 0, 2], [4, 1, 5]], dtype=np.int64
)
EVAL = KNOWN[[0, 1, 3, 4, 6, 7]]


def test_constant_scorer_ties_by_definition():
    """Constant scorer: optimistic 1, pessimistic |S|, realistic (|S|+1)/2, non-deterministic = position in ID order."""
    scorer = ConstantScorer(6)
    ranks = rank_split(scorer, EVAL, KNOWN)
    expected = brute_force_frame(scorer, EVAL, KNOWN)
    for column in [*RANK_COLUMNS, "num_candidates"]:
        np.testing.assert_array_equal(ranks[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    size = expected["num_candidates"].to_numpy()
    np.testing.assert_array_equal(ranks["rank_optimistic"], 1)
    np.testing.assert_array_equal(ranks["rank_pessimistic"], size)
    np.testing.assert_array_equal(ranks["rank_realistic"], (size + 1) / 2)
    # e.g. (0, r0, 2), tail side: answers 1 and 4 of (0, r0, ?) are filtered, kept 0, 2, 3, 5 -> entity 2 is 2nd
    row = ranks[(ranks["side"] == "tail") & (ranks["head"] == 0) & (ranks["tail"] == 2)].iloc[0]
    assert (row["num_candidates"], row["rank_nondeterministic"]) == (4, 2)
    # the prescription used in the reference-scorer table agrees with the brute force
    prescribed = constant_scorer_ranks(EVAL, KNOWN, 6)
    for column in [*RANK_COLUMNS, "num_candidates"]:
        np.testing.assert_array_equal(prescribed[column].to_numpy(), expected[column].to_numpy(), err_msg=column)


def test_partial_ties_all_rank_types_and_orders():
    """Scores with ties (3 levels): every rank type, under the original IDs and under two permutations."""
    scorer = TableScorer(6, levels=3)
    for seed in (None, 1, 2):
        permutation = None if seed is None else random_permutation(6, seed)
        ranks = rank_split(scorer, EVAL, KNOWN, permutation=permutation)
        expected = brute_force_frame(scorer, EVAL, KNOWN, permutation=permutation)
        for column in [*RANK_COLUMNS, "num_candidates"]:
            np.testing.assert_array_equal(ranks[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    # optimistic <= non-deterministic <= pessimistic, query by query
    assert (ranks["rank_optimistic"] <= ranks["rank_nondeterministic"]).all()
    assert (ranks["rank_nondeterministic"] <= ranks["rank_pessimistic"]).all()


def test_permutation_changes_the_nondeterministic_rank_known_answer():
    """Constant scorer on 5 entities, one triple (3, r, 1): tail 1 is 2nd in ID order, head 3 is 4th.

    Swapping the IDs of entities 0 and 1 makes tail 1 the first candidate; head 3 stays 4th. MRR goes from
    (1/2 + 1/4) / 2 = 0.375 to (1 + 1/4) / 2 = 0.625, Hits@1 from 0 to 0.5; the realistic rank stays 3 on both sides.
    """
    triples = np.array([[3, 0, 1]])
    scorer = ConstantScorer(5)
    before = rank_split(scorer, triples, triples)
    after = rank_split(scorer, triples, triples, permutation=np.array([1, 0, 2, 3, 4]))
    assert before.set_index("side")["rank_nondeterministic"].to_dict() == {"head": 4, "tail": 2}
    assert after.set_index("side")["rank_nondeterministic"].to_dict() == {"head": 4, "tail": 1}
    assert list(before["rank_realistic"]) == list(after["rank_realistic"]) == [3.0, 3.0]

    def metric(ranks, key):
        m = compute_metrics(ranks, metrics=[key])
        return m[(m["side"] == "both") & (m["rank_type"] == "nondeterministic")]["value"].item()

    assert metric(before, "mrr") == pytest.approx(0.375)
    assert metric(after, "mrr") == pytest.approx(0.625)
    assert (metric(before, "hits@1"), metric(after, "hits@1")) == (0.0, 0.5)


def test_random_scorer_has_no_ties_is_seeded_and_uniform():
    scorer = RandomScorer(50, seed=3)
    heads = torch.arange(40) % 7
    relations = torch.arange(40) % 3
    rows = scorer.score_tails(heads, relations)
    # each row is a permutation of 0..E-1: no ties
    assert torch.equal(rows.sort(dim=1).values, torch.arange(50, dtype=torch.float32).expand(40, 50))
    # a query's scores do not depend on its batch, and differ between sides and seeds
    assert torch.equal(scorer.score_tails(heads[5:6], relations[5:6])[0], rows[5])
    assert not torch.equal(scorer.score_heads(relations[5:6], heads[5:6])[0], rows[5])
    assert not torch.equal(RandomScorer(50, seed=4).score_tails(heads[5:6], relations[5:6])[0], rows[5])
    # ranks of 3000 unfiltered queries: all rank types equal, uniform on 1..50 (chi-square goodness of fit)
    triples = np.stack([np.arange(3000) % 50, np.arange(3000) // 50, np.zeros(3000, dtype=np.int64)], axis=1)
    ranks = rank_split(scorer, triples, triples[:0], sides=("tail",))
    for column in RANK_COLUMNS[1:]:
        np.testing.assert_array_equal(ranks[column], ranks["rank_optimistic"])
    counts = np.bincount(ranks["rank_optimistic"], minlength=51)[1:]
    assert stats.chisquare(counts).pvalue > 1e-3
    assert ranks["rank_realistic"].mean() == pytest.approx(25.5, abs=4 * 14.43 / np.sqrt(3000))


@pytest.fixture(scope="module")
def tiny(repo) -> LPData:
    folder = repo / "tests" / "data" / "tiny"
    spec = {"source": "files", **{s: str(folder / f"{s}.txt") for s in ("train", "valid", "test")}}
    return load_dataset("tiny", spec)


@pytest.fixture(scope="module")
def tiny_model(tiny):
    from kgeval.lp.training import train_model

    torch.set_num_threads(1)
    spec = {
        "model": "DistMult",
        "model_kwargs": {"embedding_dim": 8},
        "optimizer_kwargs": {"lr": 0.01},
        "training_kwargs": {"num_epochs": 2, "batch_size": 64},
    }
    return train_model(tiny, spec, seed=0).model


def test_permuted_scorer_relabels_a_real_model(tiny, tiny_model):
    """A PyKEEN model under relabeled IDs: same scores for the same entities, and the same ranks except ties."""
    from kgeval.lp.scoring import make_scorer

    base = make_scorer(tiny_model, device="cpu")
    permutation = random_permutation(tiny.num_entities, 5)
    permuted = PermutedScorer(base, permutation)
    triples = tiny.testing.mapped_triples.numpy()
    mapped = permute_triples(triples, permutation)
    h, r, t = (torch.from_numpy(triples[:, i].copy()) for i in range(3))
    ph, pt = torch.from_numpy(mapped[:, 0].copy()), torch.from_numpy(mapped[:, 2].copy())
    inverse = torch.from_numpy(np.argsort(permutation))
    torch.testing.assert_close(permuted.score_tails(ph, r), base.score_tails(h, r)[:, inverse])
    torch.testing.assert_close(permuted.score_heads(r, pt), base.score_heads(r, t)[:, inverse])

    known = tiny.all_mapped_triples()
    original = rank_split(base, triples, known)
    relabeled = rank_split(base, triples, known, permutation=permutation)
    for column in ["rank_optimistic", "rank_realistic", "rank_pessimistic", "num_candidates"]:
        np.testing.assert_array_equal(original[column], relabeled[column], err_msg=column)
    # the per-query path agrees with the pipeline's engine (rank_lp groups queries by anchor and relation)
    engine = rank_lp(tiny_model, triples, filter_triples=known, device="cpu")
    for side in ("head", "tail"):
        part = original[original["side"] == side]
        for rank_type, values in engine[side].ranks().items():
            np.testing.assert_array_equal(part[f"rank_{rank_type}"].to_numpy(), values, err_msg=f"{side} {rank_type}")


def test_reference_scorer_table_on_tiny_data(tiny):
    metrics = ["mr", "mrr", "hits@1", "amr"]
    table = reference_scorer_table(tiny, "tiny", "test", metrics, random_seed=0)
    assert set(table["scorer"]) == {"constant", "random"}
    # brute-force candidate counts
    triples = tiny.testing.mapped_triples.numpy()
    known = np.concatenate([t.numpy() for t in tiny.all_mapped_triples()])
    sizes = brute_force_frame(ConstantScorer(tiny.num_entities), triples, known)["num_candidates"].to_numpy()

    def value(scorer, rank_type, metric, side="both"):
        row = table[(table["scorer"] == scorer) & (table["rank_type"] == rank_type) & (table["metric"] == metric)
                    & (table["side"] == side)]
        assert len(row) == 1, (scorer, rank_type, metric)
        return row.iloc[0]

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


def test_permutation_table_on_tiny_data(tiny, tiny_model, tmp_path):
    from kgeval.lp.scoring import make_scorer

    scorers = {
        ("reference", "constant", 0): ConstantScorer(tiny.num_entities),
        ("reference", "random", 0): RandomScorer(tiny.num_entities, seed=0),
        ("model", "ties", 0): TableScorer(tiny.num_entities, levels=2),
        ("model", "distmult", 0): make_scorer(tiny_model, device="cpu"),
    }
    table = permutation_table(tiny, "tiny", "test", scorers, [1, 2], ["mrr", "hits@1"])
    assert set(table["order"]) == {ORIGINAL_ORDER, order_name(1), order_name(2)}
    realistic = table[table["rank_type"] == "realistic"]
    assert (realistic["change"] == 0).all()
    assert (table[table["scorer"] == "random"]["change"] == 0).all()
    assert (table[table["order"] == ORIGINAL_ORDER]["change"] == 0).all()
    # brute force: MRR of the non-deterministic rank of the constant and the tied scorer under each order
    triples = tiny.testing.mapped_triples.numpy()
    known = np.concatenate([t.numpy() for t in tiny.all_mapped_triples()])
    moved = False
    for name in ("constant", "ties"):
        scorer = scorers[("reference" if name == "constant" else "model", name, 0)]
        for seed in (None, 1, 2):
            permutation = None if seed is None else random_permutation(tiny.num_entities, seed)
            ranks = brute_force_frame(scorer, triples, known, permutation=permutation)["rank_nondeterministic"]
            row = table[(table["scorer"] == name) & (table["order"] == order_name(seed)) & (table["side"] == "both")
                        & (table["rank_type"] == "nondeterministic") & (table["metric"] == "mrr")]
            assert row["value"].item() == pytest.approx((1.0 / ranks).mean())
            moved |= row["change"].item() != 0
    assert moved, "no permutation moved a tied scorer's MRR; the test data is too small to show the effect"
    table.to_csv(tmp_path / "permutations.tsv", sep="\t", index=False)
    write_permutations_figure(tmp_path / "permutations.tsv", tmp_path / "p.pdf", tmp_path / "p.png", "test", "both",
                              ["mrr", "hits@1"])
    assert (tmp_path / "p.pdf").stat().st_size > 0 and (tmp_path / "p.png").stat().st_size > 0


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
