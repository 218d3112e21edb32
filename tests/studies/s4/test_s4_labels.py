"""S4 label sets: validation, writing and reading, and the released S4 labels (loaded and downloaded)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.labels import LabelSet, load_released_labels, read_triples_file, triple_index, unique_triples


@pytest.fixture(scope="module")
def release(request):
    from conftest import shared_data_dir

    root = shared_data_dir()
    if not (root / "kgc-sparsity").is_dir() or not (root / "fb15k237").is_dir():
        pytest.skip(f"S4 release or FB15k-237 not present under {root} (set KGEVAL_SHARED_DATA)")
    return root


@pytest.mark.shared_data
def test_released_labels(release) -> None:
    test_file = read_triples_file(release / "fb15k237" / "test.txt")
    train = read_train(release)
    entities = set(train["head"]) | set(train["tail"])
    # as the dataset loader does: drop test triples with entities unseen in training (one of them is sampled)
    known = test_file["head"].isin(entities) & test_file["tail"].isin(entities)
    test = test_file.loc[known]
    labels = load_released_labels(test, release / "kgc-sparsity", entities=entities, relations=set(train["relation"]))
    t = labels.triples
    # FB-Test-S: the 1,023 sampled test triples are the rows of test.txt at sample_idxs.txt
    idx = [int(x) for x in (release / "kgc-sparsity/FB-Test-S/sample_idxs.txt").read_text().split()]
    sampled = read_triples_file(release / "kgc-sparsity/FB-Test-S/samples.txt")
    pd.testing.assert_frame_equal(test_file.iloc[idx].reset_index(drop=True), sampled)
    sampled = sampled.loc[sampled["head"].isin(entities) & sampled["tail"].isin(entities)]
    assert len(sampled) == 1022 and labels.meta["dropped_unknown"]["samples"] == 1
    sparse_eval, sparse_filter = labels.level_masks("sparse")
    got = (
        t.loc[sparse_eval, ["head", "relation", "tail"]]
        .sort_values(["head", "relation", "tail"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(got, sampled.sort_values(["head", "relation", "tail"]).reset_index(drop=True))
    # every FB-Test-O triple is filtered at every level
    assert int(t["original"].sum()) == len(test.drop_duplicates())
    assert (sparse_filter == (sparse_eval | t["original"].to_numpy())).all()
    # FB-Test-S-C: 2,738 positives = 1,023 sampled + 1,715 pooled; the sampled one with an unseen entity is gone
    deepest_eval, _ = labels.level_masks("depth10")
    assert int(deepest_eval.sum()) == 2738 - 1
    assert labels.meta["num_added_positive"] == 1715
    summary = labels.summary().set_index("level")
    added = summary.loc[[f"depth{d}" for d in range(1, 11)], "num_added"].to_numpy()
    assert (np.diff(added) >= 0).all() and added[0] > 0
    assert (
        summary.loc["depth2", "num_added"] == 287
    )  # "merely 287 added labeled positive triples at depth 2" (Sec. 4.2)
    # 21,469 pooled judgments, less the 45 non-sampled ones with an entity unseen in training
    assert summary.loc["depth10", "num_judged"] == 21469 - 45


def test_label_set_validation() -> None:
    triples = pd.DataFrame(
        {
            "head": ["a", "a"],
            "relation": ["r", "r"],
            "tail": ["b", "b"],
            "depth": [0.0, 1.0],
            "original": True,
            "known": False,
        }
    )
    with pytest.raises(ValueError, match="twice"):
        LabelSet(triples=triples, judgments=pd.DataFrame(), max_depth=1)
    ok = LabelSet(triples=triples.iloc[:1], judgments=pd.DataFrame(columns=["depth"]), max_depth=1)
    with pytest.raises(ValueError, match="deeper"):
        ok.level_masks("depth3")
    with pytest.raises(ValueError, match="unknown label level"):
        ok.level_masks("deep")


@pytest.mark.shared_data
def test_release_download_and_cache(release, tmp_path) -> None:
    """The download path (pystow) fetches every release file once; a second call reads the cache only."""
    from kgeval.studies.s4.labels import RELEASE_FILES, fetch_release

    root = fetch_release(tmp_path, url=(release / "kgc-sparsity").as_uri())
    for relative in RELEASE_FILES:
        assert (root / relative).read_bytes() == (release / "kgc-sparsity" / relative).read_bytes()
    again = fetch_release(tmp_path, url="file:///nonexistent/kgc-sparsity")  # cached: nothing is fetched
    assert again == root



def read_train(release) -> pd.DataFrame:
    return pd.read_csv(
        release / "fb15k237" / "train.txt",
        sep="\t",
        header=None,
        names=["head", "relation", "tail"],
        dtype=str,
        quoting=3,
        keep_default_na=False,
    )


def random_triples(seed: int, n: int = 60) -> pd.DataFrame:
    """Triples with many duplicates, integer and string labels mixed, and an extra column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "head": rng.integers(0, 4, n),
            "relation": rng.choice(["r1", "r2", "r10"], n),
            "tail": [f"e{v}" if v % 2 else v for v in rng.integers(0, 5, n)],
            "label": rng.choice(["Y", "N"], n),
        }
    )


@pytest.mark.parametrize("seed", range(5))
def test_unique_triples_against_brute_force(seed) -> None:
    frame = random_triples(seed)
    expected = sorted({(str(h), str(r), str(t)) for h, r, t in zip(frame["head"], frame["relation"], frame["tail"])})
    got = unique_triples(frame, "pool")
    assert list(got.columns) == ["head", "relation", "tail"]
    assert list(got.itertuples(index=False, name=None)) == expected
    assert list(got.index) == list(range(len(expected)))


def test_unique_triples_names_the_missing_column() -> None:
    with pytest.raises(ValueError, match=r"judgments: missing column\(s\) \['tail'\]"):
        unique_triples(pd.DataFrame({"head": ["a"], "relation": ["r"]}), "judgments")


@pytest.mark.parametrize("seed", range(5))
def test_triple_index_membership_against_brute_force(seed) -> None:
    frame, queries = random_triples(seed, 30), random_triples(seed + 100, 40)
    index = triple_index(frame)
    assert len(index) == len(frame)
    known = {(str(h), str(r), str(t)) for h, r, t in zip(frame["head"], frame["relation"], frame["tail"])}
    asked = [(str(h), str(r), str(t)) for h, r, t in zip(queries["head"], queries["relation"], queries["tail"])]
    assert list(triple_index(queries).isin(index)) == [q in known for q in asked]
    assert any(q in known for q in asked) and not all(q in known for q in asked)

