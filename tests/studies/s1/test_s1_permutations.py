"""S1 permutation study: metrics under seeded relabelings of the entity IDs, against brute-force ranks."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.io import read_tsv
from kgeval.studies.s1.permutations import _parse_model_path, permutation_table, write_permutation_table
from kgeval.studies.s1.rank_type_figures import write_permutations_figure
from kgeval.studies.s1.rank_types import ORIGINAL_ORDER, order_name
from kgeval.studies.s1.reference_scorers import ConstantScorer, RandomScorer, random_permutation
from s1_samples import TINY_SPEC, TableScorer, brute_force_frame, tiny_data, tiny_model


def test_permutation_table_on_tiny_data(tmp_path):
    from kgeval.lp.scoring import make_scorer

    tiny = tiny_data()
    scorers = {
        ("reference", "constant", 0): ConstantScorer(tiny.num_entities),
        ("reference", "random", 0): RandomScorer(tiny.num_entities, seed=0),
        ("model", "ties", 0): TableScorer(tiny.num_entities, levels=2),
        ("model", "distmult", 0): make_scorer(tiny_model(), device="cpu"),
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


def test_change_is_the_difference_to_the_original_order():
    """Every row's ``change`` is its value minus the value of the same (scorer, side, rank type, metric) under the
    dataset's own IDs; the columns and rank types are those asked for."""
    tiny = tiny_data()
    scorers = {("model", "ties", 3): TableScorer(tiny.num_entities, levels=2, seed=3)}
    table = permutation_table(tiny, "tiny", "valid", scorers, [4], ["mrr"], rank_types=("nondeterministic",))
    assert list(table.columns) == ["dataset", "kind", "scorer", "seed", "split", "side", "rank_type", "metric", "order",
                                   "value", "change"]
    assert set(table["rank_type"]) == {"nondeterministic"} and set(table["split"]) == {"valid"}
    assert set(table["seed"]) == {3} and set(table["kind"]) == {"model"}
    original = table[table["order"] == ORIGINAL_ORDER].set_index("side")["value"]
    for row in table[table["order"] == order_name(4)].itertuples():
        assert row.change == pytest.approx(row.value - original[row.side])
    # the permuted value by brute force on the valid split
    permutation = random_permutation(tiny.num_entities, 4)
    triples = tiny.validation.mapped_triples.numpy()
    known = np.concatenate([t.numpy() for t in tiny.all_mapped_triples()])
    ranks = brute_force_frame(scorers[("model", "ties", 3)], triples, known, permutation=permutation)
    for side in ("head", "tail"):
        want = (1.0 / ranks.loc[ranks["side"] == side, "rank_nondeterministic"]).mean()
        got = table[(table["order"] == order_name(4)) & (table["side"] == side)]["value"].item()
        assert got == pytest.approx(want)


def test_permutation_table_rejects_bad_requests():
    tiny = tiny_data()
    scorers = {("reference", "constant", 0): ConstantScorer(tiny.num_entities)}
    with pytest.raises(ValueError, match="permutation seeds must be distinct"):
        permutation_table(tiny, "tiny", "test", scorers, [1, 1], ["mrr"])
    with pytest.raises(ValueError, match="unknown rank types"):
        permutation_table(tiny, "tiny", "test", scorers, [1], ["mrr"], rank_types=("median",))
    other = {("model", "small", 0): ConstantScorer(tiny.num_entities - 1)}
    with pytest.raises(ValueError, match="trained on another dataset"):
        permutation_table(tiny, "tiny", "test", other, [1], ["mrr"])


def test_parse_model_path():
    assert _parse_model_path("results/models/fb15k237/TransE/3/model.pt") == ("fb15k237", "TransE", 3)
    with pytest.raises(ValueError, match="integer seed"):
        _parse_model_path("results/models/fb15k237/TransE/best/model.pt")
    with pytest.raises(ValueError, match="expected a path"):
        _parse_model_path("TransE/model.pt")


def test_write_permutation_table_reference_scorers_only(tmp_path):
    out = tmp_path / "permutations.tsv"
    written = write_permutation_table([], {"tiny": TINY_SPEC}, None, out, "test", [5], ["hits@1"], random_seed=1)
    back = read_tsv(out)
    assert len(back) == len(written) and set(back["scorer"]) == {"constant", "random"}
    assert set(back["seed"]) == {1} and set(back["order"]) == {ORIGINAL_ORDER, order_name(5)}
    # the constant scorer's non-deterministic Hits@1 is the share of queries whose true entity is the first candidate
    tiny = tiny_data()
    triples = tiny.testing.mapped_triples.numpy()
    known = np.concatenate([t.numpy() for t in tiny.all_mapped_triples()])
    ranks = brute_force_frame(ConstantScorer(tiny.num_entities), triples, known,
                              permutation=random_permutation(tiny.num_entities, 5))
    row = back[(back["scorer"] == "constant") & (back["order"] == order_name(5)) & (back["side"] == "both")
               & (back["rank_type"] == "nondeterministic")]
    assert row["value"].item() == pytest.approx((ranks["rank_nondeterministic"] == 1).mean())
    with pytest.raises(ValueError, match="not among the studied datasets"):
        write_permutation_table(["results/models/other/TransE/0/model.pt"], {"tiny": TINY_SPEC}, None,
                                tmp_path / "x.tsv", "test", [1], ["mrr"])
    with pytest.raises(ValueError, match="no datasets given"):
        write_permutation_table([], {}, None, tmp_path / "x.tsv", "test", [1], ["mrr"])
