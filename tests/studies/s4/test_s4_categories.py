"""S4 relation categories (1-1, 1-N, N-1, N-N): by hand, and against the release's category files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s4.categories import CATEGORIES, load_released_categories, relation_categories

from test_s4_labels import read_train, release  # noqa: F401  (release: a fixture)


def compare_categories(computed: pd.DataFrame, released: pd.Series) -> pd.DataFrame:
    """Counts of computed (columns) against released (rows) categories over the relations both know, all four
    categories on each axis, zero-filled."""
    merged = (
        computed.set_index("relation")["category"]
        .rename("computed")
        .to_frame()
        .join(released.rename("released"), how="inner")
    )
    table = pd.crosstab(merged["released"], merged["computed"])
    return table.reindex(index=list(CATEGORIES), columns=list(CATEGORIES), fill_value=0)


@pytest.mark.shared_data
def test_relation_categories_match_the_release(release) -> None:
    train = read_train(release)
    computed = relation_categories(train)
    released = load_released_categories(release / "kgc-sparsity")
    table = compare_categories(computed, released)
    assert table.to_numpy().sum() == 237
    assert np.trace(table.to_numpy()) == 237, f"categories disagree with the release:\n{table}"


def test_relation_categories_by_hand() -> None:
    triples = pd.DataFrame(
        [
            ("a", "one", "x"),
            ("b", "one", "y"),  # 1-1
            ("a", "onemany", "x"),
            ("a", "onemany", "y"),
            ("b", "onemany", "z"),
            ("b", "onemany", "w"),  # 1-N
            ("a", "manyone", "x"),
            ("b", "manyone", "x"),
            ("c", "manyone", "y"),
            ("d", "manyone", "y"),  # N-1
            ("a", "mm", "x"),
            ("a", "mm", "y"),
            ("b", "mm", "x"),
            ("b", "mm", "y"),  # N-N
        ],
        columns=["head", "relation", "tail"],
    )
    got = relation_categories(triples).set_index("relation")["category"].to_dict()
    assert got == {"one": "1-1", "onemany": "1-N", "manyone": "N-1", "mm": "N-N"}
    with pytest.raises(ValueError, match="lack the column"):
        relation_categories(triples.drop(columns="tail"))
