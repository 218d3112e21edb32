"""S3 mapping features and splits (paper 002, Sec. 3.2).

For every reference alignment ``(a, b)``:

- ``s_name``: the normalized Levenshtein similarity ``1 - lev(x, y) / max(|x|, |y|)`` (rapidfuzz's
  ``Levenshtein.normalized_similarity``) of the two entity names after :func:`preprocess_name`; when an entity has
  several names, the best pair (highest similarity). ``NaN`` (the paper's "NA") when either entity has no valid name,
  i.e. no name that is non-empty after preprocessing.
- ``n_attr``: the mean of the two entities' numbers of attributes (``NaN`` when the dataset has none).

The paper calls ``s_name`` a "normalized Levenshtein distance" but splits on ``s_name = 1`` for identical names
and picks "the two names leading to the highest similarity", so it is used here as a similarity.

Splits (Sec. 3.2):

- by name: ``same`` (``s_name = 1``), ``close`` (``s_name < 1``), ``different`` (``s_name`` is NA). Optional
  extension (``different_below = t``, not in the paper): ``s_name < t`` also counts as ``different``. On DBP15k every
  entity has a URI name, so the paper's "different" split is empty there; the extension makes it non-empty.
- by attributes, with per-dataset thresholds ``(k1, k2)``, ``k1 > k2``: ``large`` (``n_attr >= k1``), ``medium``
  (``k2 <= n_attr < k1``), ``small`` (``n_attr < k2``); no split (empty) when ``n_attr`` is NA.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

from kgeval.studies.s3.data import S3Pair

__all__ = [
    "NAME_SPLITS",
    "ATTR_SPLITS",
    "SPLIT_KINDS",
    "preprocess_name",
    "valid_names",
    "name_similarity",
    "name_splits",
    "attr_splits",
    "mapping_features",
    "split_sizes",
]

#: name-based splits, in the paper's column order
NAME_SPLITS: tuple[str, ...] = ("same", "close", "different")
#: attribute-based splits, in the paper's column order
ATTR_SPLITS: tuple[str, ...] = ("small", "medium", "large")
#: the split families of the tables: ``all`` (every test mapping), ``name`` and ``attr``
SPLIT_KINDS: dict[str, tuple[str, ...]] = {"all": ("all",), "name": NAME_SPLITS, "attr": ATTR_SPLITS}

_SEPARATORS = re.compile(r"[-_\\]")


def preprocess_name(name: str) -> str:
    """The paper's name preprocessing: dash, underscore and backslash become a space, punctuation is removed,
    letters are lower-cased.

    Punctuation is every character of a Unicode punctuation category (``P*``: ASCII ``(),.'"!?`` as well as
    e.g. the CJK ``·`` and ``（）``). Runs of white space are then collapsed to one space and the ends stripped (not
    stated in the paper; without it ``"a - b"`` and ``"a b"`` would differ).

    :param name: a raw name (e.g. ``National_Front_(France)``)
    :returns: the normalised name (``national front france``); may be empty
    """
    text = _SEPARATORS.sub(" ", name)
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    return " ".join(text.lower().split())


def valid_names(names: Sequence[str]) -> list[str]:
    """The preprocessed names that are non-empty, without duplicates, in first-seen order."""
    out: list[str] = []
    for name in names:
        clean = preprocess_name(name)
        if clean and clean not in out:
            out.append(clean)
    return out


def name_similarity(names_a: Sequence[str], names_b: Sequence[str]) -> float:
    """``s_name`` of one mapping: the best normalized Levenshtein similarity over all pairs of valid names.

    :param names_a: raw names of the graph-1 entity
    :param names_b: raw names of the graph-2 entity
    :returns: a value in [0, 1], or ``nan`` when either side has no valid name
    """
    a, b = valid_names(names_a), valid_names(names_b)
    if not a or not b:
        return float("nan")
    return max(Levenshtein.normalized_similarity(x, y) for x in a for y in b)


def name_splits(s_name: np.ndarray, different_below: float | None = None) -> np.ndarray:
    """Assign the name-based split of every mapping.

    :param s_name: shape (n,), ``nan`` = NA
    :param different_below: ``None`` (the paper) or a threshold t in (0, 1]: ``s_name < t`` is also "different"
    :returns: shape (n,), object array of ``same`` / ``close`` / ``different``
    """
    s = np.asarray(s_name, dtype=float)
    if different_below is not None and not 0.0 < float(different_below) <= 1.0:
        raise ValueError(f"different_below must lie in (0, 1], got {different_below}")
    out = np.full(s.shape, "close", dtype=object)
    out[s == 1.0] = "same"
    different = np.isnan(s)
    if different_below is not None:
        different |= s < float(different_below)
    out[different & (s != 1.0)] = "different"
    return out


def attr_splits(n_attr: np.ndarray, k1: float, k2: float) -> np.ndarray:
    """Assign the attribute-based split of every mapping.

    :param n_attr: shape (n,), ``nan`` = no attributes known
    :param k1: lower bound of "large"
    :param k2: lower bound of "medium" (``k2 < k1``)
    :returns: shape (n,), object array of ``large`` / ``medium`` / ``small``, ``None`` where ``n_attr`` is NA
    """
    if not k2 < k1:
        raise ValueError(f"attribute thresholds need k2 < k1, got k1={k1}, k2={k2}")
    n = np.asarray(n_attr, dtype=float)
    out = np.full(n.shape, None, dtype=object)
    out[n < k2] = "small"
    out[(n >= k2) & (n < k1)] = "medium"
    out[n >= k1] = "large"
    return out


def mapping_features(
    s3pair: S3Pair, k1: float | None, k2: float | None, different_below: float | None = None
) -> pd.DataFrame:
    """The features table: one row per reference alignment, sorted by ``id1``.

    :param s3pair: the pair with names and attribute counts
    :param k1: attribute threshold of "large" (``None``: the attribute split is not assigned)
    :param k2: attribute threshold of "medium"
    :param different_below: the optional name-split extension (see module doc)
    :returns: columns ``id1, id2, label1, label2, name1, name2`` (the best-matching valid names, empty if none),
        ``s_name, n_attr1, n_attr2, n_attr, name_split_paper, name_split, attr_split``
    """
    pair = s3pair.pair
    alignment = pair.alignment
    rows = []
    for a, b in alignment.tolist():
        va, vb = valid_names(s3pair.names1[a]), valid_names(s3pair.names2[b])
        if va and vb:
            best = max(((Levenshtein.normalized_similarity(x, y), x, y) for x in va for y in vb), key=lambda t: t[0])
            rows.append((best[0], best[1], best[2]))
        else:
            rows.append((float("nan"), va[0] if va else "", vb[0] if vb else ""))
    s_name = np.asarray([r[0] for r in rows], dtype=float)
    if s3pair.has_attributes:
        n1 = s3pair.num_attributes1[alignment[:, 0]]
        n2 = s3pair.num_attributes2[alignment[:, 1]]
    else:
        n1 = n2 = np.full(len(alignment), np.nan)
    n_attr = (n1 + n2) / 2.0
    table = pd.DataFrame(
        {
            "id1": alignment[:, 0],
            "id2": alignment[:, 1],
            "label1": [pair.entity_labels1[i] for i in alignment[:, 0]],
            "label2": [pair.entity_labels2[i] for i in alignment[:, 1]],
            "name1": [r[1] for r in rows],
            "name2": [r[2] for r in rows],
            "s_name": s_name,
            "n_attr1": n1,
            "n_attr2": n2,
            "n_attr": n_attr,
            "name_split_paper": name_splits(s_name),
            "name_split": name_splits(s_name, different_below),
            "attr_split": (
                attr_splits(n_attr, k1, k2)
                if s3pair.has_attributes and k1 is not None and k2 is not None
                else np.full(len(alignment), None, dtype=object)
            ),
        }
    )
    return table.sort_values("id1", kind="stable").reset_index(drop=True)


def split_sizes(
    features: pd.DataFrame,
    k1: float | None,
    k2: float | None,
    different_below: float | None = None,
) -> pd.DataFrame:
    """Sizes of every split of one dataset.

    :param features: the table of :func:`mapping_features`
    :returns: columns ``kind, split, definition, num_alignments, share``; kinds ``name`` (the split used),
        ``name_paper`` (the paper's definition, listed only when the extension is on), ``attr`` (absent without
        attributes)
    """
    n = len(features)
    rows = []
    t = different_below
    name_defs = {
        "same": "s_name = 1",
        "close": "s_name < 1" if t is None else f"{t:g} <= s_name < 1",
        "different": "s_name is NA (no valid name)" if t is None else f"s_name is NA or s_name < {t:g}",
    }
    paper_defs = {"same": "s_name = 1", "close": "s_name < 1", "different": "s_name is NA (no valid name)"}
    kinds = [("name", "name_split", name_defs)]
    if t is not None:
        kinds.append(("name_paper", "name_split_paper", paper_defs))
    if features["attr_split"].notna().any() and k1 is not None and k2 is not None:
        attr_defs = {"small": f"n_attr < {k2:g}", "medium": f"{k2:g} <= n_attr < {k1:g}", "large": f"n_attr >= {k1:g}"}
        kinds.append(("attr", "attr_split", attr_defs))
    for kind, column, definitions in kinds:
        for split, definition in definitions.items():
            count = int((features[column] == split).sum())
            rows.append((kind, split, definition, count, count / n if n else float("nan")))
    return pd.DataFrame(rows, columns=["kind", "split", "definition", "num_alignments", "share"])
