"""Re-split a link-prediction dataset: new validation and test splits of a given share of all triples.

Paper 004 (Sec. 6.1) found NELL-995's published validation and test splits (0.4 % and 2.6 % of the triples) too
small and too uniform to learn calibration functions on, and "reconfigured these validation and test splits to contain
1.6 % of the triples each". The paper gives no further rule; kgeval's re-split (:func:`resplit_triples`) is:

1. pool the three shipped splits and drop duplicate triples;
2. visit the pooled triples in a seeded random order and move a triple to the held-out splits only if every entity
   and relation it uses keeps at least one triple in training (so nothing in validation or test is unseen in
   training, which PyKEEN could not score and kgeval would otherwise drop);
3. the first ``round(valid_fraction * n)`` moved triples form validation, the next ``round(test_fraction * n)`` test.

Configured per dataset as ``resplit: {valid_fraction: 0.016, test_fraction: 0.016, seed: 0}`` (any source).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

__all__ = ["ResplitError", "resplit_triples", "resplit_from_spec"]


class ResplitError(ValueError):
    """The requested held-out splits cannot be formed (too few triples can leave training)."""


def resplit_triples(
    labeled: dict[str, np.ndarray], valid_fraction: float, test_fraction: float, seed: int = 0
) -> dict[str, np.ndarray]:
    """Pool the splits and draw new validation and test splits (module docstring), deterministic by ``seed``.

    :param labeled: ``train``, ``valid``, ``test`` -> shape (n, 3) string arrays ``head, relation, tail``
    :param valid_fraction: share of the pooled (deduplicated) triples in the new validation split
    :param test_fraction: share in the new test split
    :param seed: seed of the random order
    :return: the new ``train``, ``valid``, ``test`` arrays; disjoint, their union is the pooled set, and every entity
        and relation of ``valid`` and ``test`` occurs in ``train``
    :raises ResplitError: if the fractions are out of range or too few triples can leave training
    """
    if not (0 < valid_fraction < 1 and 0 < test_fraction < 1 and valid_fraction + test_fraction < 1):
        raise ResplitError(
            f"resplit fractions must lie in (0, 1) and sum below 1; got valid {valid_fraction}, test {test_fraction}"
        )
    pooled = np.concatenate([np.asarray(labeled[s], dtype=str).reshape(-1, 3) for s in ("train", "valid", "test")])
    pooled = np.unique(pooled, axis=0)
    n = len(pooled)
    n_valid, n_test = round(valid_fraction * n), round(test_fraction * n)
    entity_count = Counter(pooled[:, 0].tolist()) + Counter(pooled[:, 2].tolist())
    relation_count = Counter(pooled[:, 1].tolist())
    order = np.random.default_rng(seed).permutation(n)
    held: list[int] = []
    for i in order:
        if len(held) == n_valid + n_test:
            break
        head, relation, tail = pooled[i]
        # a self-loop uses its entity twice; it may leave only if another triple keeps the entity
        need = 2 if head == tail else 1
        if (
            relation_count[relation] > 1
            and entity_count[head] > need
            and (head == tail or entity_count[tail] > 1)
        ):
            held.append(int(i))
            relation_count[relation] -= 1
            entity_count[head] -= 1
            entity_count[tail] -= 1
    if len(held) < n_valid + n_test:
        raise ResplitError(
            f"only {len(held)} of {n} triples can leave training without losing an entity or relation; "
            f"{n_valid + n_test} are needed (lower the fractions)"
        )
    keep = np.ones(n, dtype=bool)
    keep[held] = False
    return {
        "train": pooled[keep],
        "valid": pooled[held[:n_valid]],
        "test": pooled[held[n_valid:]],
    }


def resplit_from_spec(labeled: dict[str, np.ndarray], resplit: dict[str, Any] | None) -> dict[str, np.ndarray]:
    """Apply a dataset entry's ``resplit`` settings (None or empty: the splits as shipped)."""
    if not resplit:
        return labeled
    from kgeval.config import schema_defaults

    resplit = {**schema_defaults("datasets.*.resplit"), **resplit}  # a partial entry gets the schema's defaults
    return resplit_triples(
        labeled,
        valid_fraction=float(resplit["valid_fraction"]),
        test_fraction=float(resplit["test_fraction"]),
        seed=int(resplit["seed"]),
    )
