"""S4: ranks under a sparser label set, derived from the filtered ranks table, against direct recomputation."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.studies.s4.ranks import RANK_TYPES, AnswerIndex


def brute_rank(scores: np.ndarray, true: int, excluded: set[int]) -> dict[str, float]:
    """Every rank type of candidate ``true`` among all candidates not in ``excluded`` (ties by id), by enumeration."""
    keep = [j for j in range(len(scores)) if j == true or j not in excluded]
    s = scores[true]
    better = sum(scores[j] > s for j in keep)
    equal = sum(scores[j] == s for j in keep)  # includes the true candidate
    order = sorted(keep, key=lambda j: (-scores[j], j))  # a stable descending sort in id order
    return {
        "optimistic": 1 + better,
        "pessimistic": better + equal,
        "realistic": (1 + better + better + equal) / 2,
        "nondeterministic": order.index(true) + 1,
        "num_candidates": len(keep),
    }


class World:
    """A small link-prediction world with integer scores (many ties), brute-force ranked."""

    def __init__(self, seed: int, num_entities: int = 12, num_relations: int = 3, num_true: int = 120):
        rng = np.random.default_rng(seed)
        self.entities = [f"e{i:02d}" for i in range(num_entities)]  # label order = id order, as in PyKEEN
        self.scores = {}
        for side, r, a in itertools.product(("head", "tail"), range(num_relations), range(num_entities)):
            self.scores[(side, r, a)] = rng.integers(0, 4, size=num_entities).astype(float)
        triples = {tuple(x) for x in rng.integers(0, [num_entities, num_relations, num_entities], size=(num_true, 3))}
        triples = sorted(triples)
        rng.shuffle(triples)
        cut = len(triples) // 3
        self.train = set(triples[:cut])
        self.universe = sorted(triples[cut:])

    def answers_of(self, side: str, r: int, a: int, triples) -> set[int]:
        if side == "head":
            return {h for h, rr, t in triples if rr == r and t == a}
        return {t for h, rr, t in triples if rr == r and h == a}

    def ranks(self, filtered: set) -> pd.DataFrame:
        """Ranks table of every universe triple with train + ``filtered`` removed (each answer itself kept)."""
        rows = []
        for h, r, t in self.universe:
            for side in ("head", "tail"):
                anchor, answer = (t, h) if side == "head" else (h, t)
                excluded = self.answers_of(side, r, anchor, self.train | filtered)
                excluded.discard(answer)
                scores = self.scores[(side, r, anchor)]
                got = brute_rank(scores, answer, excluded)
                rows.append(
                    {
                        "head": self.entities[h],
                        "relation": f"r{r}",
                        "tail": self.entities[t],
                        "side": side,
                        **{f"rank_{k}": v for k, v in got.items() if k != "num_candidates"},
                        "num_candidates": got["num_candidates"],
                        "score": scores[answer],
                    }
                )
        return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_derived_ranks_equal_brute_force(seed: int) -> None:
    world = World(seed)
    full = world.ranks(set(world.universe))
    index = AnswerIndex(full.sample(frac=1.0, random_state=seed))  # input order must not matter
    rng = np.random.default_rng(seed + 10)
    for share in (0.0, 0.3, 0.7, 1.0):
        keep = [x for x in world.universe if rng.random() < share]
        expected = world.ranks(set(keep)).set_index(["head", "relation", "tail", "side"])
        kept = pd.MultiIndex.from_tuples(
            [(world.entities[h], f"r{r}", world.entities[t]) for h, r, t in keep], names=["head", "relation", "tail"]
        )
        unfiltered = ~pd.MultiIndex.from_frame(index.answers[["head", "relation", "tail"]]).isin(kept)
        keys = pd.MultiIndex.from_frame(index.answers[["head", "relation", "tail", "side"]])
        for rank_type in RANK_TYPES:
            got = index.ranks(unfiltered, rank_type)
            want = expected.loc[keys, f"rank_{rank_type}"].to_numpy(dtype=float)
            np.testing.assert_array_equal(got, want, err_msg=f"{rank_type}, share {share}")
        np.testing.assert_array_equal(index.num_candidates(unfiltered), expected.loc[keys, "num_candidates"].to_numpy())


def test_all_filtered_gives_the_table_back() -> None:
    world = World(5)
    full = world.ranks(set(world.universe))
    index = AnswerIndex(full)
    none = np.zeros(len(index), dtype=bool)
    for rank_type in RANK_TYPES:
        np.testing.assert_array_equal(index.ranks(none, rank_type), index.base_ranks(rank_type))


def test_bad_tables_are_rejected() -> None:
    world = World(3)
    full = world.ranks(set(world.universe))
    with pytest.raises(ValueError, match="missing column"):
        AnswerIndex(full.drop(columns="score"), name="x.parquet")
    with pytest.raises(ValueError, match="appears twice"):
        AnswerIndex(pd.concat([full, full.iloc[:1]]))
    bad = full.copy()
    bad.loc[0, "side"] = "middle"
    with pytest.raises(ValueError, match="side must be"):
        AnswerIndex(bad)


@pytest.mark.slow
def test_identity_with_a_real_pykeen_model_and_the_engine() -> None:
    """Train TransE on Nations for a few epochs; ranks with hidden answers unfiltered, derived vs rank_lp."""
    ranking = pytest.importorskip("kgeval.lp.ranking", reason="the ranking engine kgeval.lp.ranking is not available")
    from pykeen.datasets import Nations
    from pykeen.models import TransE
    from pykeen.training import SLCWATrainingLoop

    torch.manual_seed(0)
    dataset = Nations()
    model = TransE(triples_factory=dataset.training, embedding_dim=8, random_seed=0)
    loop = SLCWATrainingLoop(model=model, triples_factory=dataset.training, optimizer="Adam")
    loop.train(triples_factory=dataset.training, num_epochs=3, batch_size=256, use_tqdm=False)
    train, valid, test = dataset.training, dataset.validation, dataset.testing
    ids_to_entity = {v: k for k, v in train.entity_to_id.items()}
    assert [ids_to_entity[i] for i in range(len(ids_to_entity))] == sorted(train.entity_to_id), "ids follow labels"
    ids_to_relation = {v: k for k, v in train.relation_to_id.items()}

    def frame(triples: torch.Tensor, results) -> pd.DataFrame:
        t = triples.numpy()
        parts = []
        for side, res in results.items():
            parts.append(
                pd.DataFrame(
                    {
                        "head": [ids_to_entity[i] for i in t[:, 0]],
                        "relation": [ids_to_relation[i] for i in t[:, 1]],
                        "tail": [ids_to_entity[i] for i in t[:, 2]],
                        "side": side,
                        "rank_optimistic": res.rank_optimistic,
                        "rank_realistic": res.rank_realistic,
                        "rank_pessimistic": res.rank_pessimistic,
                        "rank_nondeterministic": res.rank_nondeterministic,
                        "num_candidates": res.num_candidates,
                        "score": res.score.astype(np.float64),
                    }
                )
            )
        return pd.concat(parts, ignore_index=True)

    with torch.no_grad():
        full = ranking.rank_lp(
            model, test.mapped_triples, filter_triples=[train.mapped_triples, valid.mapped_triples, test.mapped_triples]
        )
    index = AnswerIndex(frame(test.mapped_triples, full))
    rng = np.random.default_rng(0)
    hidden = rng.random(test.num_triples) < 0.5
    visible = test.mapped_triples[torch.from_numpy(~hidden)]
    with torch.no_grad():
        direct = ranking.rank_lp(model, visible, filter_triples=[train.mapped_triples, valid.mapped_triples, visible])
    expected = frame(visible, direct).set_index(["head", "relation", "tail", "side"])
    hidden_ids = test.mapped_triples[torch.from_numpy(hidden)].numpy()
    hidden_keys = pd.MultiIndex.from_tuples(
        [(ids_to_entity[h], ids_to_relation[r], ids_to_entity[t]) for h, r, t in hidden_ids],
        names=["head", "relation", "tail"],
    )
    unfiltered = pd.MultiIndex.from_frame(index.answers[["head", "relation", "tail"]]).isin(hidden_keys)
    keys = pd.MultiIndex.from_frame(index.answers[["head", "relation", "tail", "side"]])
    rows = np.flatnonzero(~unfiltered)
    assert len(rows) == 2 * int((~hidden).sum())
    moved = 0
    for rank_type in RANK_TYPES:
        got = index.ranks(unfiltered, rank_type)[rows]
        want = expected.loc[keys[rows], f"rank_{rank_type}"].to_numpy(dtype=float)
        np.testing.assert_array_equal(got, want, err_msg=rank_type)
        moved += int((got != index.base_ranks(rank_type)[rows]).sum())
    assert moved > 0, "no hidden answer changed any rank: the test would not catch a wrong derivation"
    np.testing.assert_array_equal(
        index.num_candidates(unfiltered)[rows], expected.loc[keys[rows], "num_candidates"].to_numpy()
    )
