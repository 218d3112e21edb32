"""S4 numbers from the authors' released label files that no released table holds: Table 1 and the pool statistics,
Fig. 2's relation distributions with their KL divergences, and Table 2's examples with entity names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.studies.s4.categories import CATEGORIES, load_released_categories
from kgeval.studies.s4.labels import TRIPLE_COLUMNS, read_triples_file
from kgeval.studies.s4.release_files import PathLike

__all__ = [
    "KL_PAIRS",
    "label_set_statistics",
    "pool_statistics",
    "relation_distributions",
    "kl_divergences",
    "read_mid_names",
    "added_positive_examples",
]


def _triples(array_or_frame) -> pd.DataFrame:
    frame = (
        pd.DataFrame(np.asarray(array_or_frame), columns=TRIPLE_COLUMNS)
        if not isinstance(array_or_frame, pd.DataFrame)
        else array_or_frame
    )
    return frame[TRIPLE_COLUMNS].astype(str)


def _count_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def label_set_statistics(folder: PathLike, test: np.ndarray | pd.DataFrame) -> pd.DataFrame:
    """Table 1: triples, positives and negatives of FB-Test-O, FB-Test-S and FB-Test-S-C.

    FB-Test-O is the dataset's test file (every triple a positive); FB-Test-S is ``FB-Test-S/samples.txt`` (all
    positives); FB-Test-S-C is ``FB-Test-S-C/annotations.txt``, its Y and N judgments (the sampled triples included).

    :param test: shape: (n, 3), the dataset's test triples as shipped (:func:`kgeval.lp.datasets.labeled_splits`)
    :return: ``test_set, num_triples, num_positives, num_negatives`` in Table 1's order
    """
    folder = Path(folder)
    test = _triples(test)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    rows = [
        ("FB-Test-O", len(test), len(test), 0),
        ("FB-Test-S", len(samples), len(samples), 0),
        (
            "FB-Test-S-C",
            len(annotations),
            int((annotations["label"] == "Y").sum()),
            int((annotations["label"] == "N").sum()),
        ),
    ]
    return pd.DataFrame(rows, columns=["test_set", "num_triples", "num_positives", "num_negatives"])


def pool_statistics(folder: PathLike, test: np.ndarray | pd.DataFrame) -> pd.DataFrame:
    """Sec. 3.1-3.2 numbers of the label files: the pool, its filtering, the positives added per depth.

    :return: ``statistic, value``: ``test_relations`` (relations of FB-Test-O), ``sampled_triples``,
        ``pool_triples``, ``pool_entities``, ``pool_relations`` (``supplementary/pooling_depth.txt``),
        ``human_labelled`` and ``filtered_trivial`` (the two supplementary files), ``added_positives_depth<d>``
        (FB-Test-S-C positives beyond FB-Test-S that entered the pool at depth <= d), ``added_positives_<category>``
        (by the release's relation category)
    """
    folder = Path(folder)
    test = _triples(test)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    pool = read_triples_file(folder / "FB-Test-S-C/supplementary/pooling_depth.txt", with_depth=True)
    pool = pool.groupby(TRIPLE_COLUMNS, as_index=False)["depth"].min()
    sample_index = pd.MultiIndex.from_frame(samples)
    positives = annotations.loc[annotations["label"] == "Y", TRIPLE_COLUMNS].drop_duplicates()
    added = positives.loc[~pd.MultiIndex.from_frame(positives).isin(sample_index)]
    added = added.merge(pool, on=TRIPLE_COLUMNS, how="left")
    rows = [
        ("test_relations", int(test["relation"].nunique())),
        ("sampled_triples", len(samples)),
        ("pool_triples", len(pool)),
        ("pool_entities", int(pd.concat([pool["head"], pool["tail"]]).nunique())),
        ("pool_relations", int(pool["relation"].nunique())),
        ("human_labelled", _count_lines(folder / "FB-Test-S-C/supplementary/human_labeled.txt")),
        ("filtered_trivial", _count_lines(folder / "FB-Test-S-C/supplementary/filtered.txt")),
        ("added_positives", len(added)),
        ("added_positives_without_depth", int(added["depth"].isna().sum())),
    ]
    max_depth = int(pool["depth"].max())
    for depth in range(1, max_depth + 1):
        rows.append((f"added_positives_depth{depth}", int((added["depth"] <= depth).sum())))
    categories = load_released_categories(folder)
    by_category = added["relation"].map(categories).fillna("unknown").value_counts()
    for category in (*CATEGORIES, "unknown"):
        if category != "unknown" or category in by_category:
            rows.append((f"added_positives_{category}", int(by_category.get(category, 0))))
    return pd.DataFrame(rows, columns=["statistic", "value"])


def relation_distributions(folder: PathLike, splits: Mapping[str, np.ndarray | pd.DataFrame]) -> pd.DataFrame:
    """Fig. 2 data: triples per relation in FB-Test-O, FB-Test-S, FB-Test-S-C (its positives) and all of FB15k-237.

    :param splits: the dataset's ``train``, ``valid``, ``test`` triples as shipped
    :return: ``relation, FB-Test-O, FB-Test-S, FB-Test-S-C, FB15k-237`` (counts; every relation of the dataset),
        sorted by FB-Test-O count (descending), then relation
    """
    folder = Path(folder)
    sets = {
        "FB-Test-O": _triples(splits["test"]),
        "FB-Test-S": read_triples_file(folder / "FB-Test-S/samples.txt"),
        "FB-Test-S-C": read_triples_file(folder / "FB-Test-S-C/test.txt"),
        "FB15k-237": pd.concat([_triples(splits[s]) for s in ("train", "valid", "test")], ignore_index=True),
    }
    relations = sorted(set().union(*(set(f["relation"]) for f in sets.values())))
    out = pd.DataFrame({"relation": relations})
    for name, frame in sets.items():
        out[name] = out["relation"].map(frame["relation"].value_counts()).fillna(0).astype(np.int64)
    out = out.sort_values(["FB-Test-O", "relation"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def _kl(p_counts: np.ndarray, q_counts: np.ndarray, pseudo: float) -> float:
    p = p_counts.astype(float) + pseudo
    q = q_counts.astype(float) + pseudo
    p, q = p / p.sum(), q / q.sum()
    mask = p > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


#: the paper's three KL divergences (Sec. 3.2): (first, second) distribution of KL(first || second)
KL_PAIRS: tuple[tuple[str, str], ...] = (
    ("FB-Test-O", "FB-Test-S"),
    ("FB15k-237", "FB-Test-O"),
    ("FB-Test-O", "FB-Test-S-C"),
)


def kl_divergences(distributions: pd.DataFrame, pseudo: float = 1.0) -> pd.DataFrame:
    """KL divergences between the relation distributions of Fig. 2, natural log.

    ``kl`` adds ``pseudo`` (1: Laplace smoothing) to every relation's count over all relations of the dataset before
    normalising; this reproduces the paper's three values (0.0889, 0.2789, 0.2386) for the pairs of
    :data:`KL_PAIRS`, i.e. KL(parent set || derived set): the test set against its sample and its completed sample,
    the whole dataset against its test set. The paper states neither the direction nor the smoothing.
    ``kl_unsmoothed`` is KL(second || first) on the raw distributions (finite because the second set's relations
    all occur in the first), for reference.

    :return: ``first, second, kl, kl_unsmoothed``
    """
    rows = []
    for first, second in KL_PAIRS:
        p, q = distributions[first].to_numpy(), distributions[second].to_numpy()
        unsmoothed = _kl(q, p, 0.0) if np.all(p[q > 0] > 0) else math.inf
        rows.append((first, second, _kl(p, q, pseudo), unsmoothed))
    return pd.DataFrame(rows, columns=["first", "second", "kl", "kl_unsmoothed"])


def read_mid_names(folder: PathLike) -> dict[str, str]:
    """Freebase MID -> entity name, from the release's ``FB-Test-O/context/mid2name.txt``."""
    names: dict[str, str] = {}
    for line in (Path(folder) / "FB-Test-O/context/mid2name.txt").read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            mid, name = line.split("\t", 1)
            names.setdefault(mid.strip(), name.strip())
    return names


def added_positive_examples(folder: PathLike, questions: Sequence[Mapping[str, str]]) -> pd.DataFrame:
    """Table 2: for each question, its FB-Test-S answers and the release's judgments of the pooled answers, by name.

    :param questions: ``{side, relation, anchor}`` with ``side`` the predicted side (``tail`` for ``(s, p, ?)``) and
        ``anchor`` the known entity's name (or MID); a name shared by several MIDs picks the one with an FB-Test-S
        question of that relation
    :return: ``side, relation, anchor, anchor_mid, original_answers, added_positives, judged_negatives`` (names joined
        by ``; `` in the release's order), one row per question, in the given order
    :raises ValueError: for a question that FB-Test-S does not ask
    """
    folder = Path(folder)
    names = read_mid_names(folder)
    mids_of: dict[str, list[str]] = {}
    for mid, name in names.items():
        mids_of.setdefault(name, []).append(mid)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    sample_index = pd.MultiIndex.from_frame(samples)
    rows = []
    for question in questions:
        side, relation, anchor = question["side"], question["relation"], question["anchor"]
        if side not in ("head", "tail"):
            raise ValueError(f"Table 2 example {question}: side must be head or tail")
        anchor_col, answer_col = ("head", "tail") if side == "tail" else ("tail", "head")
        asked = samples.loc[samples["relation"] == relation, anchor_col]
        candidates = [m for m in mids_of.get(anchor, [anchor]) if m in set(asked)]
        if not candidates:
            raise ValueError(f"Table 2 example {question}: FB-Test-S has no such question")
        mid = candidates[0]
        original = samples.loc[(samples["relation"] == relation) & (samples[anchor_col] == mid), answer_col]
        judged = annotations.loc[(annotations["relation"] == relation) & (annotations[anchor_col] == mid)]
        new = judged.loc[~pd.MultiIndex.from_frame(judged[TRIPLE_COLUMNS]).isin(sample_index)]

        def named(values) -> str:
            return "; ".join(names.get(v, v) for v in values)

        rows.append(
            {
                "side": side,
                "relation": relation,
                "anchor": names.get(mid, mid),
                "anchor_mid": mid,
                "original_answers": named(original),
                "added_positives": named(new.loc[new["label"] == "Y", answer_col]),
                "judged_negatives": named(new.loc[new["label"] == "N", answer_col]),
            }
        )
    return pd.DataFrame(rows)
