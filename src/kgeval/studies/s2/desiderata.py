"""S2: the desiderata of Hoyt et al. (2022, Sec. 2.3, Table 1), checked on synthetic rank sets for every metric.

The paper states five desiderata for a rank-based metric, in the frame where larger values are better (it writes
them for the rank transformation inside the mean, e.g. 1/r for MRR):

- **non-negativity**: every value is >= 0;
- **fixed optimum**: the best ranks (all 1) give the metric's largest value, and that value is the same for every
  number of candidates and ranking tasks (a metric where smaller is better has no such optimum in this frame:
  MR's optimum 1 is its minimum);
- **asymptotic pessimum**: the worst ranks (all N) give values that converge as N grows, to a limit that does not
  depend on the number of ranking tasks (MR grows without bound; MRR tends to 0);
- **monotonicity** (the paper's "anti-monotonic"): making any single rank worse strictly lowers the value (Hits@k
  is flat beyond k; MR rises);
- **size invariance**: the expected value under uniformly random ranks is the same for every number of candidates
  and ranking tasks (exact where the base metric has a closed form, which tests/test_metrics.py checks by
  enumeration; otherwise Monte-Carlo means compared within ``z_threshold`` standard errors).

:func:`desiderata` checks each on rank sets built from a fixed seed and writes ✔/✘, with the numbers behind each
verdict in a second table. Derived metrics are evaluated through PyKEEN's own affine coefficients
(:meth:`pykeen.metrics.ranking.DerivedRankBasedMetric.get_coefficients`), computed once per candidate set.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pykeen.metrics.ranking import DerivedRankBasedMetric

from kgeval.io import write_tsv
from kgeval.metrics import METRICS, closed_form, metric_keys

__all__ = [
    "PROPERTIES",
    "YES",
    "NO",
    "DesiderataSettings",
    "desiderata",
    "write_desiderata",
]

PROPERTIES: tuple[str, ...] = (
    "non_negativity",
    "fixed_optimum",
    "asymptotic_pessimum",
    "monotonicity",
    "size_invariance",
)
YES, NO = "✔", "✘"


@dataclass(frozen=True)
class DesiderataSettings:
    """The synthetic rank sets.

    :param sizes: numbers of candidates N for the optimum, non-negativity and size-invariance checks
    :param num_ranks: numbers of ranking tasks n (every task of a set has the same N)
    :param pessimum_sizes: increasing N at which the worst value must have converged (the last two are compared)
    :param num_random: random rank sets per (N, n)
    :param monotonicity_size: N of the rank sets whose ranks are made worse one at a time
    :param monotonicity_sets: how many such sets (of ``num_ranks[0]`` tasks)
    :param tolerance: relative tolerance of "the same value" for the pessimum (times max(1, |value|))
    :param z_threshold: how many standard errors two Monte-Carlo means may differ for size invariance (metrics
        without a closed-form expectation)
    :param seed: seed of every random set
    """

    sizes: tuple[int, ...] = (100, 1_000, 10_000)
    num_ranks: tuple[int, ...] = (10, 100)
    pessimum_sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    num_random: int = 200
    monotonicity_size: int = 100
    monotonicity_sets: int = 10
    tolerance: float = 1e-2
    z_threshold: float = 5.0
    seed: int = 0


class _Evaluator:
    """Evaluate several metrics on rank vectors sharing one candidate set (derived metrics via fixed coefficients)."""

    def __init__(self, keys: Sequence[str], num_candidates: np.ndarray):
        self.num_candidates = num_candidates
        self.instances = {key: METRICS[key].instantiate() for key in keys}
        self.coefficients = {
            key: m.get_coefficients(num_candidates=num_candidates)
            for key, m in self.instances.items()
            if isinstance(m, DerivedRankBasedMetric)
        }

    def expectations(self) -> dict[str, float | None]:
        """E[metric] under uniform random ranks from the base metric's closed form (None where it has none).

        Derived metrics are affine in their base, so E = scale * E[base] + offset with PyKEEN's coefficients.
        """
        out: dict[str, float | None] = {}
        for key, metric in self.instances.items():
            base_key = METRICS[key].base if key in self.coefficients else key
            e, _ = closed_form(base_key, self.num_candidates)
            if e is not None and key in self.coefficients:
                c = self.coefficients[key]
                e = c.scale * e + c.offset
            out[key] = e
        return out

    def __call__(self, ranks: np.ndarray) -> dict[str, float]:
        out = {}
        for key, metric in self.instances.items():
            if key in self.coefficients:
                c = self.coefficients[key]
                out[key] = c.scale * metric.base(ranks=ranks, num_candidates=self.num_candidates) + c.offset
            else:
                out[key] = float(metric(ranks=ranks, num_candidates=self.num_candidates))
        return out


@dataclass
class _Observations:
    """What the synthetic rank sets give, per metric key (:func:`desiderata` turns it into verdicts)."""

    #: the value at the best ranks, per (N, n) of the sizes
    best: dict[str, list[float]]
    #: every value seen on the sizes' rank sets (best, worst, random)
    every: dict[str, list[float]]
    #: within each (N, n), no rank set beats the best ranks
    best_is_max: dict[str, bool]
    #: (N, n, mean, standard error) under random ranks; standard error 0: exact
    random_means: dict[str, list[tuple[int, int, float, float]]]
    #: the value at the worst ranks, per (N, n) of the pessimum sizes
    worst: dict[str, dict[tuple[int, int], float]]
    #: single-rank increments tried, and how many strictly lowered each metric
    mono_total: int
    mono_strict: dict[str, int]


def _observe_sizes(keys: Sequence[str], settings: DesiderataSettings, rng: np.random.Generator, seen: _Observations):
    """Best, worst and random rank sets for every (N, n) of ``settings.sizes`` x ``settings.num_ranks``."""
    best, every, best_is_max, random_means = seen.best, seen.every, seen.best_is_max, seen.random_means
    for n_cand in settings.sizes:
        for n in settings.num_ranks:
            nc = np.full(n, n_cand, dtype=np.int64)
            evaluate = _Evaluator(keys, nc)
            for key, v in evaluate(np.ones(n)).items():
                best[key].append(v)
                every[key].append(v)
            for key, v in evaluate(nc.astype(float)).items():
                every[key].append(v)
            samples = [evaluate(rng.integers(1, n_cand + 1, size=n).astype(float)) for _ in range(settings.num_random)]
            moments = evaluate.expectations()
            for key in keys:
                values = np.array([s[key] for s in samples])
                every[key].extend(values.tolist())
                b = best[key][-1]
                best_is_max[key] &= bool(b >= max(values.max(), every[key][-len(values) - 1]) - 1e-9 * max(1.0, abs(b)))
                if moments[key] is not None:  # exact: closed form of the base metric, through the affine coefficients
                    random_means[key].append((n_cand, n, moments[key], 0.0))
                else:  # Monte Carlo over the random sets, with its standard error
                    random_means[key].append(
                        (n_cand, n, float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values))))
                    )


def _observe(keys: Sequence[str], settings: DesiderataSettings) -> _Observations:
    """Evaluate every synthetic rank set (the random ones drawn in a fixed order from ``settings.seed``)."""
    rng = np.random.default_rng(settings.seed)
    seen = _Observations(
        best={k: [] for k in keys},
        every={k: [] for k in keys},
        best_is_max={k: True for k in keys},
        random_means={k: [] for k in keys},
        worst={k: {} for k in keys},
        mono_total=0,
        mono_strict={k: 0 for k in keys},
    )
    _observe_sizes(keys, settings, rng, seen)
    for n_cand in settings.pessimum_sizes:
        for n in settings.num_ranks:
            nc = np.full(n, n_cand, dtype=np.int64)
            for key, v in _Evaluator(keys, nc)(nc.astype(float)).items():
                seen.worst[key][(n_cand, n)] = v
    n_mono = settings.num_ranks[0]
    mono_nc = np.full(n_mono, settings.monotonicity_size, dtype=np.int64)
    mono_eval = _Evaluator(keys, mono_nc)
    for _ in range(settings.monotonicity_sets):
        ranks = rng.integers(1, settings.monotonicity_size, size=n_mono).astype(float)  # every rank can still grow
        before = mono_eval(ranks)
        for i in range(n_mono):
            worse = ranks.copy()
            worse[i] += 1
            after = mono_eval(worse)
            seen.mono_total += 1
            for key in keys:
                if after[key] < before[key]:
                    seen.mono_strict[key] += 1
    return seen


def _pessimum_check(w: dict[tuple[int, int], float], settings: DesiderataSettings) -> tuple[bool, str]:
    """Asymptotic pessimum: the worst values converge (last two sizes) to one limit for every n."""
    n_last, n_prev = settings.pessimum_sizes[-1], settings.pessimum_sizes[-2]
    limits = [w[(n_last, n)] for n in settings.num_ranks]
    scale = settings.tolerance * max(1.0, max(abs(x) for x in limits))
    converged = all(abs(w[(n_last, n)] - w[(n_prev, n)]) <= scale for n in settings.num_ranks)
    same_limit = max(limits) - min(limits) <= scale
    return (
        converged and same_limit,
        "value at worst ranks: "
        + "; ".join(
            f"n={n}: N={n_prev}: {w[(n_prev, n)]:.6g}, N={n_last}: {w[(n_last, n)]:.6g}" for n in settings.num_ranks
        ),
    )


def _size_invariance_check(
    means: list[tuple[int, int, float, float]], settings: DesiderataSettings
) -> tuple[bool, str]:
    """Size invariance: the expectations under random ranks agree for every (N, n) (exactly, or within z)."""
    exact = all(se == 0.0 for *_, se in means)
    worst_gap, worst_z = 0.0, 0.0
    for (_, _, m1, s1), (_, _, m2, s2) in ((a, c) for i, a in enumerate(means) for c in means[i + 1 :]):
        gap = abs(m1 - m2)
        se = math.sqrt(s1**2 + s2**2)
        worst_gap = max(worst_gap, gap)
        if se > 0:
            worst_z = max(worst_z, gap / se)
    if exact:
        invariant = worst_gap <= 1e-9 * max(1.0, max(abs(m) for _, _, m, _ in means))
        how = "closed form"
    else:
        invariant = worst_z <= settings.z_threshold
        how = f"Monte Carlo over {settings.num_random} random sets, largest gap = {worst_z:.3g} standard errors"
    return (
        invariant,
        f"expectation under random ranks ({how}): "
        + "; ".join(f"N={c}, n={n}: {m:.4g}" + (f"±{s:.2g}" if s else "") for c, n, m, s in means)
        + f"; largest gap {worst_gap:.4g}",
    )


def _checks(key: str, seen: _Observations, settings: DesiderataSettings) -> dict[str, tuple[bool, str]]:
    """Each property's verdict and its evidence for one metric."""
    spec = METRICS[key]
    checks: dict[str, tuple[bool, str]] = {}
    low = min(seen.every[key])
    checks["non_negativity"] = (low >= -1e-12, f"minimum over all synthetic sets: {low:.6g}")
    b = np.array(seen.best[key])
    same = bool(np.all(np.abs(b - b[0]) <= 1e-9 * max(1.0, abs(b[0]))))
    is_max = seen.best_is_max[key]
    checks["fixed_optimum"] = (
        spec.increasing and same and is_max,
        f"value at best ranks from {b.min():.6g} to {b.max():.6g} over (N, n); "
        f"{'the largest' if is_max else 'not the largest'} value of each (N, n); "
        f"larger is {'better' if spec.increasing else 'worse'}",
    )
    checks["asymptotic_pessimum"] = _pessimum_check(seen.worst[key], settings)
    checks["monotonicity"] = (
        seen.mono_strict[key] == seen.mono_total,
        f"{seen.mono_strict[key]}/{seen.mono_total} single-rank increments strictly lowered the value",
    )
    checks["size_invariance"] = _size_invariance_check(seen.random_means[key], settings)
    return checks


def desiderata(
    metrics: Sequence[str] | None = None, settings: DesiderataSettings = DesiderataSettings()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Check the five desiderata for each metric on synthetic rank sets.

    :param metrics: the keys (default: every metric of kind base, adjusted or z; dispersion and count metrics do not
        measure ranking quality)
    :param settings: the synthetic rank sets
    :return: a table with columns ``metric, label, kind`` and one ✔/✘ column per property (registry order), and an
        evidence table ``metric, property, holds, detail``
    """
    keys = metric_keys(["base", "adjusted", "z"]) if metrics is None else [METRICS[k].key for k in metrics]
    seen = _observe(keys, settings)
    verdicts, evidence = [], []
    for key in keys:
        spec = METRICS[key]
        checks = _checks(key, seen, settings)
        verdicts.append(
            {"metric": key, "label": spec.label, "kind": spec.kind}
            | {p: YES if checks[p][0] else NO for p in PROPERTIES}
        )
        evidence.extend(
            {"metric": key, "property": p, "holds": checks[p][0], "detail": checks[p][1]} for p in PROPERTIES
        )
    return pd.DataFrame(verdicts), pd.DataFrame(evidence)


def write_desiderata(
    out: str | os.PathLike,
    evidence_out: str | os.PathLike,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    num_random: int = 200,
) -> pd.DataFrame:
    """Compute :func:`desiderata` and write the ✔/✘ table and its evidence as TSV (registry order of metrics)."""
    table, evidence = desiderata(metrics, DesiderataSettings(seed=seed, num_random=num_random))
    write_tsv(table, out, sort_by=[])
    write_tsv(evidence, evidence_out, sort_by=[])
    return table
