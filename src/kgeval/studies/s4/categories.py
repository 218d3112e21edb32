"""Relation categories 1-1, 1-N, N-1 and N-N (Bordes et al., 2013), computed from the triples themselves.

A relation ``r`` has ``tails_per_head`` = the mean number of tails over the heads that occur with ``r``, and
``heads_per_tail`` likewise. With the usual threshold of 1.5 a relation is *1-N* when a head has many tails
(``tails_per_head >= 1.5``) but a tail few heads, *N-1* in the mirrored case, *N-N* when both are large and *1-1*
when neither is. Computed on the FB15k-237 training triples this reproduces every one of the 237 categories
shipped with the S4 release (``FB-Test-O/type_information/*.txt``), which :func:`load_released_categories` reads so a
test can check it.

The classification is the link-prediction core's (:func:`kgeval.lp.relation_categories.relation_categories`), under
the paper's category names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from kgeval.lp.relation_categories import relation_categories as lp_relation_categories

__all__ = [
    "CATEGORIES",
    "RELEASED_CATEGORY_FILES",
    "relation_categories",
    "load_released_categories",
]

#: the four categories, in the order of the paper's Table 3
CATEGORIES: tuple[str, ...] = ("1-1", "1-N", "N-1", "N-N")

#: file name (under ``FB-Test-O/type_information``) of each category in the S4 release
RELEASED_CATEGORY_FILES: dict[str, str] = {
    "1-1": "one_to_one.txt",
    "1-N": "one_to_many.txt",
    "N-1": "many_to_one.txt",
    "N-N": "many_to_many.txt",
}


def relation_categories(triples: pd.DataFrame, threshold: float = 1.5) -> pd.DataFrame:
    """Classify every relation of ``triples`` as 1-1, 1-N, N-1 or N-N
    (:func:`kgeval.lp.relation_categories.relation_categories` with the paper's names).

    :param triples: shape: (n, >=3), columns ``head, relation, tail`` (labels or ids)
    :param threshold: a mean of at least this many tails per head (heads per tail) makes the tail (head) side "N"
    :return: one row per relation, sorted by relation: ``relation, tails_per_head, heads_per_tail, category``
    :raises ValueError: when a column is missing or the table is empty
    """
    return lp_relation_categories(triples, threshold, labels=CATEGORIES)


def load_released_categories(folder: str | os.PathLike) -> pd.Series:
    """Read the relation categories shipped with the S4 release.

    :param folder: the release's ``FB-Test-O/type_information`` folder, or the release root, or its ``FB-Test-O``
    :return: category per relation label (index: relation), sorted by relation
    :raises FileNotFoundError: naming the missing file
    :raises ValueError: when a relation is listed in two categories
    """
    folder = Path(folder)
    for candidate in (folder, folder / "type_information", folder / "FB-Test-O" / "type_information"):
        if (candidate / RELEASED_CATEGORY_FILES["1-1"]).is_file():
            folder = candidate
            break
    seen: dict[str, str] = {}
    for category, name in RELEASED_CATEGORY_FILES.items():
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(f"released relation categories: {path} is missing (expected the S4 release layout)")
        for line_no, line in enumerate(path.read_text().splitlines(), start=1):
            relation = line.strip()
            if not relation:
                continue
            if relation in seen and seen[relation] != category:
                raise ValueError(f"{path}:{line_no}: relation {relation!r} is already listed as {seen[relation]}")
            seen[relation] = category
    return pd.Series(seen, name="category").rename_axis("relation").sort_index()
