"""Which (bias, training ratio) settings of the S3 grid a method runs (``studies.s3.claim_settings_only``).

Light on purpose (no numpy, pandas or torch): the workflow imports it when it plans the jobs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NOT_RUN_REASON", "claim_settings", "settings_of"]

#: the reason written for a setting a method does not run (``studies.s3.claim_settings_only``)
NOT_RUN_REASON = (
    "not run: studies.s3.claim_settings_only lists {model}, which runs only the settings the claims read "
    "(the ideal and industrial contexts, the largest and smallest ratio without bias)"
)


def claim_settings(
    ideal: Mapping[str, Any], industrial: Mapping[str, Any], train_ratios: Sequence[float]
) -> tuple[tuple[str, float], ...]:
    """The (bias, training ratio) settings the S3 claims read (:mod:`kgeval.studies.s3.claims`): the ideal and
    industrial contexts and the largest and smallest training ratio without bias (the size claims), sorted."""
    if not train_ratios:
        raise ValueError("claim_settings: studies.s3.train_ratios is empty")
    ratios = sorted(float(r) for r in train_ratios)
    chosen = {
        (str(ideal["bias"]), float(ideal["train_ratio"])),
        (str(industrial["bias"]), float(industrial["train_ratio"])),
        ("none", ratios[-1]),
        ("none", ratios[0]),
    }
    return tuple(sorted(chosen))


def settings_of(rows: Sequence[Sequence[Any]] | None) -> tuple[tuple[str, float], ...] | None:
    """The settings as (bias, ratio) tuples from the rule's ``[[bias, ratio], ...]`` parameter (``None`` stays
    ``None``: every setting)."""
    return None if rows is None else tuple((str(b), float(r)) for b, r in rows)
