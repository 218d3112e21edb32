"""Seeded bootstrap resamples and percentile intervals.

The unit resampled is always the independent one (docs/reproducing.md, "Intervals and verdicts"): the test triple
(its head and tail queries together) for a link-prediction metric, the test mapping for entity alignment, the question
for S4's pooled labels; a correlation with dataset size is tested exactly over the datasets instead.
Every model of a dataset and split draws the same resamples: the stream's seed is the configured seed combined with
the dataset and split names (:func:`stream_seed`), and resamples are drawn in fixed-size chunks so that neither the
number of models nor a memory setting changes them.

``scipy.stats.bootstrap`` resamples one statistic at a time; the counts here are shared by every model, metric and
side, which is what makes intervals comparable and differences paired, so they are drawn by hand.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields

import numpy as np

__all__ = ["CHUNK", "BootstrapSettings", "stream_seed", "resample_indices", "resample_counts", "percentile_interval"]

#: resamples drawn per chunk; fixed, so the resamples do not depend on how a caller batches them
CHUNK = 64


@dataclass(frozen=True)
class BootstrapSettings:
    """The ``uncertainty`` section of the validated config (workflow/schemas/config.schema.yaml).

    :param resamples: bootstrap resamples B of the independent units (test triples, test mappings, questions)
    :param permutations: random sign flips of each paired test (one sign per unit)
    :param level: coverage of every interval, and 1 - the significance level of the tests
    :param seed: the configured seed, combined with the dataset and split names into each stream's seed
    """

    resamples: int
    permutations: int
    level: float
    seed: int

    @classmethod
    def from_config(cls, section: Mapping[str, object]) -> BootstrapSettings:
        """The settings from the (validated, defaults filled in) ``uncertainty`` section."""
        return cls(**{f.name: section[f.name] for f in fields(cls)})

    def describe(self, unit: str, sources: str = "") -> str:
        """The text of a ``ci_method`` column: the interval, its unit, B, and which sources of variation it covers.

        :param unit: what was resampled, e.g. ``test triples (a triple's head and tail queries together)``
        :param sources: which sources of variation the interval covers, e.g. ``one trained seed``
        """
        text = f"{100 * self.level:g} % percentile bootstrap over {unit}, B={self.resamples:,}"
        return f"{text}; {sources}" if sources else text


def stream_seed(seed: int, *keys: str) -> int:
    """A seed for one stream: the configured seed combined with names (dataset, split, ...), stable across runs and
    Python versions (CRC-32 of the names, not Python's salted ``hash``)."""
    text = "\x1f".join(str(k) for k in keys).encode()
    return int(np.random.SeedSequence([int(seed), zlib.crc32(text)]).generate_state(1)[0])


def resample_indices(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Bootstrap index arrays over ``n`` units, in chunks.

    :return: chunks of shape (b, n) with b <= :data:`CHUNK`, ``resamples`` rows in all; row j of the whole sequence
        is the same for every caller with the same ``(n, seed)``
    """
    if n < 1:
        raise ValueError(f"cannot resample {n} units; a bootstrap needs at least one")
    rng = np.random.default_rng(seed)
    done = 0
    while done < resamples:
        b = min(CHUNK, resamples - done)
        yield rng.integers(0, n, size=(b, n))
        done += b


def resample_counts(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """:func:`resample_indices` as counts: how often each unit occurs in each resample.

    :return: chunks of shape (b, n), float64 (ready for a matrix product with per-unit values); rows sum to ``n``
    """
    for idx in resample_indices(n, resamples, seed):
        b = idx.shape[0]
        flat = (idx + (np.arange(b) * n)[:, None]).ravel()
        yield np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (NaN replicates ignored; NaN bounds if all are NaN).

    :param replicates: shape: (B,)
    """
    values = np.asarray(replicates, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high)
