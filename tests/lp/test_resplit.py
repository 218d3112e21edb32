"""The re-split of paper 004 Sec. 6.1 (NELL-995: validation and test 1.6 % of the triples each)."""

import numpy as np
import pytest

from kgeval.lp.datasets import DatasetError, labeled_splits, load_dataset
from kgeval.lp.resplit import ResplitError, resplit_triples


def _tiny(seed=0, n=400):
    """A small graph with some rare entities and relations (used once), self-loops and duplicates."""
    rng = np.random.default_rng(seed)
    heads = rng.integers(0, 30, n)
    tails = rng.integers(0, 30, n)
    relations = rng.integers(0, 5, n)
    triples = [(f"e{h}", f"r{r}", f"e{t}") for h, r, t in zip(heads, relations, tails)]
    triples += [("rare_a", "r0", "e1"), ("e2", "rare_rel", "e3"), ("loop", "r1", "loop"), ("e1", "r0", "e2")]
    triples = np.asarray(triples, dtype=str)
    return {"train": triples[:300], "valid": triples[300:310], "test": triples[310:]}


def _rows(array):
    return {tuple(row) for row in array.tolist()}


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_held_out_splits_use_only_what_training_has(seed):
    labeled = _tiny()
    split = resplit_triples(labeled, 0.1, 0.1, seed=seed)
    pooled = _rows(np.concatenate(list(labeled.values())))
    n = len(pooled)
    assert len(split["valid"]) == round(0.1 * n) and len(split["test"]) == round(0.1 * n)
    train, valid, test = (_rows(split[s]) for s in ("train", "valid", "test"))
    # disjoint, no duplicates, and together the pooled set
    assert len(train) == len(split["train"]) and not train & valid and not train & test and not valid & test
    assert train | valid | test == pooled
    # the paper's property: nothing in validation or test that training lacks
    entities = set(split["train"][:, 0]) | set(split["train"][:, 2])
    relations = set(split["train"][:, 1])
    for held in (split["valid"], split["test"]):
        assert set(held[:, 0]) <= entities and set(held[:, 2]) <= entities
        assert set(held[:, 1]) <= relations
    # the rare entity, relation and the self-loop's entity stay in training
    assert ("rare_a", "r0", "e1") in train and ("e2", "rare_rel", "e3") in train and ("loop", "r1", "loop") in train


def test_resplit_is_deterministic_by_seed():
    labeled = _tiny()
    a, b = resplit_triples(labeled, 0.05, 0.05, seed=3), resplit_triples(labeled, 0.05, 0.05, seed=3)
    assert all(np.array_equal(a[s], b[s]) for s in a)
    c = resplit_triples(labeled, 0.05, 0.05, seed=4)
    assert not np.array_equal(a["test"], c["test"])


def test_resplit_refuses_impossible_shares():
    labeled = _tiny()
    with pytest.raises(ResplitError):
        resplit_triples(labeled, 0.6, 0.5)
    star = np.asarray([("hub", "r", f"leaf{i}") for i in range(20)], dtype=str)
    with pytest.raises(ResplitError, match="can leave training"):
        resplit_triples({"train": star[:18], "valid": star[18:19], "test": star[19:]}, 0.1, 0.1)


def test_dataset_entry_with_resplit(tmp_path):
    labeled = _tiny()
    spec = {"source": "files"}
    for split, triples in labeled.items():
        path = tmp_path / f"{split}.txt"
        path.write_text("".join("\t".join(row) + "\n" for row in triples.tolist()))
        spec[split] = str(path)
    spec["resplit"] = {"valid_fraction": 0.1, "test_fraction": 0.1, "seed": 0}
    data = load_dataset("tiny", spec)
    assert data.num_dropped == {"train": 0, "valid": 0, "test": 0}
    n = len(_rows(np.concatenate(list(labeled.values()))))
    assert data.validation.num_triples == data.testing.num_triples == round(0.1 * n)
    assert labeled_splits("tiny", spec)["test"].shape == (round(0.1 * n), 3)
    with pytest.raises(DatasetError, match="datasets.tiny.resplit"):
        load_dataset("tiny", {**spec, "resplit": {"valid_fraction": 0.6, "test_fraction": 0.5}})
