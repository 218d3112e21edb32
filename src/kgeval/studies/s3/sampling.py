"""Biased seed mappings (paper 002, Sec. 3.2) and the unbiased random baseline.

The paper's iterative algorithm, for the set of all mappings ``M_all`` and a seed size ``N_seed``:

1. start with an empty seed set;
2. give every mapping a score ``z`` - ``z_name`` (4, 3, 1 for the name splits same, close, different) for name bias,
   ``z_attr`` (4, 3, 1 for large, medium, small) for attribute bias, ``z_name + z_attr`` for both;
3. move the mapping with the highest score to the seed set, choosing at random among ties;
4. stop once the seed set holds ``N_seed`` mappings, else go to 3.

Implementation: one uniform random key per mapping (``rng.random(n)``, ``rng = numpy.random.default_rng(seed)``)
breaks the ties: step 3 takes the remaining mapping with the highest score and, among equal scores, the highest
key. Because the keys are i.i.d. uniform, each step picks uniformly among the tied mappings, as the paper asks, and
the whole loop equals taking the first ``N_seed`` mappings of one ``numpy.lexsort`` by (score, key), both
descending (:func:`biased_order`; ``tests/studies/s3/test_s3_sampling.py`` checks it against the literal loop). The unbiased
baseline (``bias = none``) gives every mapping the same score, so the seed set is a uniform random subset.

Sizes: ``n_train = round(train_ratio * n)``, ``n_valid = round(valid_fraction * train_ratio * n)`` (the paper's
train:valid = 2:1 is ``valid_fraction = 0.5``), ``N_seed = n_train + n_valid``. The seed set is then split at
random (next draw of the same ``rng``: a permutation of the seed set) into ``n_train`` training and ``n_valid``
validation mappings; every other mapping is a test mapping. For one seed and bias the seed sets of different
ratios are nested, since they are prefixes of the same order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "BIASES",
    "Z_NAME",
    "Z_ATTR",
    "ROLES",
    "MissingFeatureError",
    "needs_attributes",
    "bias_scores",
    "biased_order",
    "seed_set_sizes",
    "sample_roles",
    "bias_summary",
]

#: the seed-mapping settings: unbiased, name-biased, attribute-biased, both
BIASES: tuple[str, ...] = ("none", "name", "attr", "both")
#: the paper's name score per name split
Z_NAME: dict[str, int] = {"same": 4, "close": 3, "different": 1}
#: the paper's attribute score per attribute split
Z_ATTR: dict[str, int] = {"large": 4, "medium": 3, "small": 1}
#: the role of a mapping after sampling
ROLES: tuple[str, ...] = ("train", "valid", "test")


class MissingFeatureError(ValueError):
    """A bias needs a feature the dataset lacks (attribute bias without attributes)."""


def needs_attributes(bias: str) -> bool:
    """Whether a bias uses the attribute split."""
    _check_bias(bias)
    return bias in ("attr", "both")


def _check_bias(bias: str) -> None:
    if bias not in BIASES:
        raise ValueError(f"unknown bias {bias!r}; use one of {list(BIASES)}")


def bias_scores(name_split: np.ndarray, attr_split: np.ndarray | None, bias: str) -> np.ndarray:
    """The score ``z`` of every mapping under a bias.

    :param name_split: shape (n,), ``same``/``close``/``different``
    :param attr_split: shape (n,), ``large``/``medium``/``small`` (``None`` entries or ``None``: no attributes)
    :param bias: one of :data:`BIASES`
    :returns: shape (n,) int64; all zero for ``none``
    :raises MissingFeatureError: when the bias needs attributes and some mapping has no attribute split
    """
    _check_bias(bias)
    names = np.asarray(name_split, dtype=object)
    n = len(names)
    z = np.zeros(n, dtype=np.int64)
    if bias in ("name", "both"):
        unknown = set(names.tolist()) - set(Z_NAME)
        if unknown:
            raise ValueError(f"name splits must be one of {list(Z_NAME)}, found {sorted(map(str, unknown))}")
        z += np.asarray([Z_NAME[s] for s in names], dtype=np.int64)
    if bias in ("attr", "both"):
        attrs = np.asarray(attr_split if attr_split is not None else [None] * n, dtype=object)
        if any(a is None or (isinstance(a, float) and np.isnan(a)) for a in attrs):
            raise MissingFeatureError(
                f"bias {bias!r} needs the attribute split of every mapping, but the dataset has no attribute counts"
            )
        unknown = set(attrs.tolist()) - set(Z_ATTR)
        if unknown:
            raise ValueError(f"attribute splits must be one of {list(Z_ATTR)}, found {sorted(map(str, unknown))}")
        z += np.asarray([Z_ATTR[s] for s in attrs], dtype=np.int64)
    return z


def biased_order(scores: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The order in which the iterative algorithm moves mappings into the seed set.

    :param scores: shape (n,), the scores ``z``
    :param keys: shape (n,), distinct tie-breaking keys (uniform draws)
    :returns: shape (n,), mapping positions; highest score first, ties by highest key
    """
    scores = np.asarray(scores)
    keys = np.asarray(keys)
    if scores.shape != keys.shape:
        raise ValueError(f"scores {scores.shape} and keys {keys.shape} differ in shape")
    return np.lexsort((-keys, -scores))


def seed_set_sizes(n: int, train_ratio: float, valid_fraction: float = 0.5) -> tuple[int, int]:
    """``(n_train, n_valid)`` for n mappings (see module doc).

    :raises ValueError: when the seed set would leave no test mapping or hold no training mapping
    """
    if not 0.0 < train_ratio < 1.0:
        raise ValueError(f"train_ratio must lie in (0, 1), got {train_ratio}")
    if valid_fraction < 0:
        raise ValueError(f"valid_fraction must be >= 0, got {valid_fraction}")
    n_train = int(round(train_ratio * n))
    n_valid = int(round(valid_fraction * train_ratio * n))
    if n_train < 1 or n_train + n_valid >= n:
        raise ValueError(
            f"train_ratio={train_ratio} with valid_fraction={valid_fraction} gives {n_train} training and "
            f"{n_valid} validation mappings of {n}: need at least one of each kind left for training and testing"
        )
    return n_train, n_valid


def sample_roles(
    name_split: np.ndarray,
    attr_split: np.ndarray | None,
    bias: str,
    train_ratio: float,
    valid_fraction: float,
    seed: int,
) -> np.ndarray:
    """Draw the seed mappings (train and valid) under a bias; every other mapping is a test mapping.

    :param name_split: shape (n,)
    :param attr_split: shape (n,) or ``None``
    :param bias: one of :data:`BIASES`
    :param train_ratio: share of training mappings (e.g. 0.02)
    :param valid_fraction: validation size relative to training (0.5 = the paper's 2:1)
    :param seed: the sampling seed
    :returns: shape (n,), object array of ``train`` / ``valid`` / ``test``
    """
    scores = bias_scores(name_split, attr_split, bias)
    n = len(scores)
    n_train, n_valid = seed_set_sizes(n, train_ratio, valid_fraction)
    rng = np.random.default_rng(seed)
    keys = rng.random(n)
    seeds = biased_order(scores, keys)[: n_train + n_valid]
    shuffled = seeds[rng.permutation(len(seeds))]
    roles = np.full(n, "test", dtype=object)
    roles[shuffled[:n_train]] = "train"
    roles[shuffled[n_train:]] = "valid"
    return roles


def bias_summary(features: pd.DataFrame, roles: np.ndarray) -> pd.DataFrame:
    """Per role: count, mean ``s_name`` (valid names only), share with NA name, mean ``n_attr``, and the share of
    every name and attribute split - to check the direction of a bias.

    :param features: the features table (columns ``s_name``, ``n_attr``, ``name_split``, ``attr_split``)
    :param roles: shape (len(features),)
    :returns: one row per role present, plus ``seed`` (train and valid together)
    """
    roles = np.asarray(roles, dtype=object)
    groups = {role: roles == role for role in ROLES}
    groups["seed"] = roles != "test"
    rows = []
    for role, mask in groups.items():
        if not mask.any():
            continue
        part = features[mask]
        row = {
            "role": role,
            "num_mappings": int(mask.sum()),
            "mean_s_name": float(part["s_name"].mean()) if part["s_name"].notna().any() else float("nan"),
            "share_name_na": float(part["s_name"].isna().mean()),
            "mean_n_attr": float(part["n_attr"].mean()) if part["n_attr"].notna().any() else float("nan"),
        }
        for split in Z_NAME:
            row[f"share_{split}"] = float((part["name_split"] == split).mean())
        for split in Z_ATTR:
            row[f"share_{split}"] = float((part["attr_split"] == split).mean())
        rows.append(row)
    return pd.DataFrame(rows)
