"""Rank-based metrics from a ranks table, their expectations under random ranking, and the collated metrics table.

Every metric is one of PyKEEN's rank-based metric classes (:mod:`pykeen.metrics.ranking`), found through
:data:`pykeen.metrics.ranking.rank_based_metric_resolver`; this module only names them with the short keys used in
every kgeval table (:data:`METRICS`), applies them to each side and rank type of a ranks table
(:func:`compute_metrics`), and tabulates their expectation and variance when every rank is drawn uniformly at random
from ``1..num_candidates`` (:func:`expectations`, :func:`expectations_table`): PyKEEN's closed forms where a metric
has one, otherwise a Monte-Carlo estimate with a fixed seed (PyKEEN's ``NoClosedFormError`` pattern).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PyKEEN (and torch) are imported when a metric is first resolved, not by importing this module
    from pykeen.metrics.ranking import RankBasedMetric

from kgeval.io import read_tsv, write_tsv

__all__ = [
    "MetricSpec",
    "METRICS",
    "HITS_K",
    "RANK_TYPES",
    "SIDES",
    "KINDS",
    "INTERVAL_COLUMNS",
    "METHOD_CLOSED_FORM",
    "METHOD_MONTE_CARLO",
    "get_metric",
    "metric_keys",
    "supported_rank_types",
    "compute_metrics",
    "compute_metrics_file",
    "compute_metrics_files",
    "closed_form",
    "expectations",
    "expectations_table",
    "sample_metric_values",
    "tabulate_expectations",
    "collate",
    "collate_metrics",
]

#: the values of ``k`` for which Hits@k, its adjusted index AH@k and its z-score ZH@k are registered
HITS_K: tuple[int, ...] = (1, 3, 5, 10)

#: rank types of the ranks table (docs/design.md); column ``rank_{type}``
RANK_TYPES: tuple[str, ...] = ("optimistic", "realistic", "pessimistic", "nondeterministic")

#: sides of a metrics table; ``both`` pools the head and tail ranks, as PyKEEN's evaluator does
SIDES: tuple[str, ...] = ("head", "tail", "both")

#: metric kinds: ``base`` (a central tendency of the ranks or of a transform of them, or Hits@k),
#: ``dispersion`` (spread of the ranks), ``count``, ``adjusted`` (expectation-normalised or re-indexed, Hoyt et al.
#: 2022, Sec. 4.1) and ``z`` (z-scored)
KINDS: tuple[str, ...] = ("base", "dispersion", "count", "adjusted", "z")

#: the columns a per-model metrics table adds after ``value`` (kgeval.uncertainty.bootstrap_metrics)
INTERVAL_COLUMNS: tuple[str, ...] = ("ci_low", "ci_high", "ci_method")

METHOD_CLOSED_FORM = "closed_form"
METHOD_MONTE_CARLO = "monte_carlo"


@dataclass(frozen=True)
class MetricSpec:
    """One registered metric: a short key and the PyKEEN metric class (with keyword arguments) it stands for.

    :param key: the short key used in every table (``mrr``, ``zh@10``, ...)
    :param query: the name under which :data:`rank_based_metric_resolver` finds the PyKEEN class
    :param kwargs: keyword arguments of the class (``k`` for the Hits family)
    :param kind: one of :data:`KINDS`
    :param base: for ``adjusted``/``z`` metrics, the key of the base metric they transform
    :param label: a human-readable label for figures
    """

    key: str
    query: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "base"
    base: str | None = None
    label: str = ""

    @property
    def cls(self) -> type[RankBasedMetric]:
        """The PyKEEN metric class."""
        from pykeen.metrics.ranking import rank_based_metric_resolver

        return rank_based_metric_resolver.lookup(self.query)

    def instantiate(self) -> RankBasedMetric:
        """Instantiate the PyKEEN metric."""
        from pykeen.metrics.ranking import rank_based_metric_resolver

        return rank_based_metric_resolver.make(self.query, pos_kwargs=dict(self.kwargs))

    @property
    def increasing(self) -> bool:
        """Whether larger values are better."""
        return bool(self.cls.increasing)


def _build_registry() -> dict[str, MetricSpec]:
    specs = [
        MetricSpec("mr", "arithmeticmeanrank", label="MR"),
        MetricSpec("mrr", "inverseharmonicmeanrank", label="MRR"),
        MetricSpec("gmr", "geometricmeanrank", label="GMR"),
        MetricSpec("hmr", "harmonicmeanrank", label="HMR"),
        MetricSpec("igmr", "inversegeometricmeanrank", label="IGMR"),
        MetricSpec("imr", "inversearithmeticmeanrank", label="IMR"),
        MetricSpec("medr", "medianrank", label="MedR"),
        MetricSpec("imedr", "inversemedianrank", label="IMedR"),
        MetricSpec("std", "standarddeviation", kind="dispersion", label="rank std"),
        MetricSpec("var", "variance", kind="dispersion", label="rank variance"),
        MetricSpec("mad", "medianabsolutedeviation", kind="dispersion", label="rank MAD"),
        MetricSpec("count", "count", kind="count", label="count"),
        MetricSpec("amr", "adjustedarithmeticmeanrank", kind="adjusted", base="mr", label="AMR"),
        MetricSpec("amri", "adjustedarithmeticmeanrankindex", kind="adjusted", base="mr", label="AMRI"),
        MetricSpec("amrr", "adjustedinverseharmonicmeanrank", kind="adjusted", base="mrr", label="AMRR"),
        MetricSpec("agmri", "adjustedgeometricmeanrankindex", kind="adjusted", base="gmr", label="AGMRI"),
        MetricSpec("zmr", "zarithmeticmeanrank", kind="z", base="mr", label="ZMR"),
        MetricSpec("zmrr", "zinverseharmonicmeanrank", kind="z", base="mrr", label="ZMRR"),
        MetricSpec("zgmr", "zgeometricmeanrank", kind="z", base="gmr", label="ZGMR"),
    ]
    for k in HITS_K:
        specs.append(MetricSpec(f"hits@{k}", "hitsatk", {"k": k}, label=f"Hits@{k}"))
        specs.append(
            MetricSpec(f"ah@{k}", "adjustedhitsatk", {"k": k}, kind="adjusted", base=f"hits@{k}", label=f"AH@{k}")
        )
        specs.append(MetricSpec(f"zh@{k}", "zhitsatk", {"k": k}, kind="z", base=f"hits@{k}", label=f"ZH@{k}"))
    return {spec.key: spec for spec in specs}


#: every registered metric, by short key
METRICS: dict[str, MetricSpec] = _build_registry()


def get_metric(key: str) -> MetricSpec:
    """Look up a metric by its short key.

    :raises KeyError: for an unknown key, listing the known ones
    """
    try:
        return METRICS[key]
    except KeyError:
        raise KeyError(f"Unknown metric {key!r}; known metrics: {', '.join(METRICS)}") from None


def metric_keys(kinds: Iterable[str] | None = None) -> list[str]:
    """The registered keys, optionally only those of the given kinds, in registry order."""
    if kinds is None:
        return list(METRICS)
    kinds = set(kinds)
    unknown = kinds.difference(KINDS)
    if unknown:
        raise ValueError(f"Unknown metric kinds {sorted(unknown)}; known kinds: {', '.join(KINDS)}")
    return [key for key, spec in METRICS.items() if spec.kind in kinds]


def supported_rank_types(key: str) -> tuple[str, ...]:
    """The rank types a metric is computed for.

    PyKEEN restricts the adjusted and z-scored metrics to realistic ranks, whose expectation under random scoring
    (with or without ties) is exactly the one their closed forms assume. kgeval's fourth rank type, the
    non-deterministic rank, is allowed wherever PyKEEN allows all of its own rank types.
    """
    from pykeen.typing import RANK_TYPES as PYKEEN_RANK_TYPES

    supported = tuple(get_metric(key).cls.supported_rank_types)
    if set(PYKEEN_RANK_TYPES).issubset(supported):
        return RANK_TYPES
    return tuple(t for t in RANK_TYPES if t in supported)


_REQUIRED_COLUMNS = ("side", "num_candidates", *(f"rank_{t}" for t in RANK_TYPES))


def _validate_ranks(ranks: pd.DataFrame, source: str) -> None:
    missing = [c for c in _REQUIRED_COLUMNS if c not in ranks.columns]
    if missing:
        raise ValueError(
            f"{source}: ranks table lacks columns {missing} (has {list(ranks.columns)}); "
            "a ranks table needs the columns of results/ranks/... described in docs/design.md"
        )
    bad_side = sorted(set(ranks["side"].unique()).difference(("head", "tail")))
    if bad_side:
        raise ValueError(f"{source}: column 'side' must hold only 'head'/'tail', found {bad_side}")
    nc = ranks["num_candidates"].to_numpy(dtype=float)
    bad = np.flatnonzero((nc < 1) | (np.mod(nc, 1) != 0) | ~np.isfinite(nc))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{source}: column 'num_candidates' must hold integers >= 1; row {i} has {nc[i]}")
    for t in RANK_TYPES:
        r = ranks[f"rank_{t}"].to_numpy(dtype=float)
        bad = np.flatnonzero((r < 1) | (r > nc) | ~np.isfinite(r))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{source}: rank_{t} must lie in [1, num_candidates]; row {i} has rank {r[i]} "
                f"with num_candidates {nc[i]} ({bad.size} bad rows)"
            )


def _side_frames(ranks: pd.DataFrame) -> Iterable[tuple[str, pd.DataFrame]]:
    for side in SIDES:
        frame = ranks if side == "both" else ranks[ranks["side"] == side]
        if len(frame):
            yield side, frame


def _is_degenerate(spec: MetricSpec, num_candidates: np.ndarray) -> bool:
    """Whether an adjusted or z-scored metric is undefined: its base metric has zero variance under random ranking.

    This happens when no ranking task can be wrong (e.g. Hits@k with every ``num_candidates <= k``); the base metric
    then equals its optimum and its expectation, and PyKEEN would divide by a clamped epsilon.
    """
    if spec.kind not in ("adjusted", "z"):
        return False
    base = METRICS[spec.base].instantiate()
    return base.variance(num_candidates=num_candidates) <= 1e-15


def compute_metrics(
    ranks: pd.DataFrame, metrics: Sequence[str] | None = None, source: str = "ranks table"
) -> pd.DataFrame:
    """Compute every registered metric for each side and rank type of a ranks table.

    :param ranks: shape: (num_rows, ...); one row per (triple, side) with the columns ``side``, ``num_candidates`` and
        ``rank_{optimistic,realistic,pessimistic,nondeterministic}`` (docs/design.md)
    :param metrics: the keys to compute; defaults to every registered metric
    :param source: how to name the input in error messages (e.g. its path)
    :return: long table with columns ``side, rank_type, metric, value``, sorted; a metric appears only for the rank
        types of :func:`supported_rank_types`, a side only if it has ranks; an adjusted or z-scored metric whose base
        has zero variance under random ranking (every task trivially solved) is NaN
    """
    _validate_ranks(ranks, source)
    keys = list(METRICS) if metrics is None else [get_metric(k).key for k in metrics]
    instances = {key: METRICS[key].instantiate() for key in keys}
    rows = []
    for side, frame in _side_frames(ranks):
        num_candidates = frame["num_candidates"].to_numpy(dtype=np.int64)
        for rank_type in RANK_TYPES:
            values = frame[f"rank_{rank_type}"].to_numpy(dtype=float)
            for key, metric in instances.items():
                if rank_type not in supported_rank_types(key):
                    continue
                if _is_degenerate(METRICS[key], num_candidates):
                    value = float("nan")
                else:
                    value = metric(ranks=values, num_candidates=num_candidates)
                rows.append((side, rank_type, key, float(value)))
    out = pd.DataFrame(rows, columns=["side", "rank_type", "metric", "value"])
    return out.sort_values(["side", "rank_type", "metric"], kind="stable").reset_index(drop=True)


def compute_metrics_file(ranks_path: str | os.PathLike, out: str | os.PathLike) -> pd.DataFrame:
    """Read a ranks Parquet file, compute :func:`compute_metrics` and write the long TSV atomically."""
    ranks = pd.read_parquet(ranks_path)
    table = compute_metrics(ranks, source=str(ranks_path))
    write_tsv(table, out, sort_by=["side", "rank_type", "metric"])
    return table


def compute_metrics_files(ranks_paths: Sequence[str | os.PathLike], outs: Sequence[str | os.PathLike]) -> None:
    """:func:`compute_metrics_file` for each (ranks table, output) pair, e.g. every split of one trained model.

    One job per model instead of one per split: PyKEEN's and torch's import costs each job several seconds, more
    than the metrics of a small dataset's split.
    """
    if len(ranks_paths) != len(outs):
        raise ValueError(f"{len(ranks_paths)} ranks tables but {len(outs)} outputs; give one output per ranks table")
    for ranks_path, out in zip(ranks_paths, outs):
        compute_metrics_file(ranks_path, out)


def sample_metric_values(
    metrics: Mapping[str, RankBasedMetric],
    num_candidates: np.ndarray,
    num_samples: int,
    seed: int,
    max_elements: int = 2**22,
) -> dict[str, np.ndarray]:
    """Evaluate metrics on the same ``num_samples`` rank vectors, each rank uniform on ``1..N_i`` (common draws).

    :param metrics: key -> PyKEEN metric instance
    :param num_candidates: shape: (n,)
    :param num_samples: number of rank vectors
    :param seed: seed of the draws (the same seed gives the same vectors whatever the metrics)
    :param max_elements: at most this many ranks are held in memory at once
    :return: key -> shape: (num_samples,) sampled metric values
    """
    from pykeen.metrics.ranking import generate_ranks

    generator = np.random.default_rng(seed)
    n = num_candidates.size
    chunk = max(1, max_elements // max(n, 1))
    values: dict[str, list[float]] = {key: [] for key in metrics}
    done = 0
    while done < num_samples:
        size = min(chunk, num_samples - done)
        # PyKEEN's sampler: each rank uniform on 1..num_candidates
        sampled = generate_ranks(num_candidates=num_candidates, prefix_shape=(size,), seed=generator)
        for row in sampled:
            for key, metric in metrics.items():
                values[key].append(metric(ranks=row, num_candidates=num_candidates))
        done += size
    return {key: np.asarray(v, dtype=float) for key, v in values.items()}


def closed_form(key: str, num_candidates: np.ndarray) -> tuple[float | None, float | None]:
    """PyKEEN's closed-form expectation and variance of a metric under uniform random ranks (None where it has none).

    :param num_candidates: shape: (n,) integers >= 1
    """
    from pykeen.metrics.ranking import NoClosedFormError

    metric = get_metric(key).instantiate()
    moments: list[float | None] = []
    for fn in (metric.expected_value, metric.variance):
        try:
            moments.append(float(fn(num_candidates=np.asarray(num_candidates, dtype=np.int64))))
        except NoClosedFormError:
            moments.append(None)
    return moments[0], moments[1]


def expectations(
    num_candidates: np.ndarray,
    metrics: Sequence[str] | None = None,
    num_samples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Expectation and variance of each metric when every rank is uniform on ``1..num_candidates[i]``, independently.

    Uses PyKEEN's closed form where the metric has one; otherwise (PyKEEN raises
    :class:`pykeen.metrics.ranking.NoClosedFormError`) estimates both from ``num_samples`` random rank vectors drawn
    with ``seed`` (the same draws for every metric), with the sample variance (``ddof=1``).

    :param num_candidates: shape: (n,) the number of candidates of each ranking task
    :param metrics: the keys; defaults to every registered metric
    :param num_samples: number of Monte-Carlo draws for metrics without closed form
    :param seed: seed of the Monte-Carlo draws
    :return: columns ``metric, n_ranks, expectation, variance, method`` (``method`` is ``closed_form`` or
        ``monte_carlo``; ``closed_form+monte_carlo`` if only one of the two moments has a closed form)
    """
    num_candidates = np.asarray(num_candidates)
    if num_candidates.ndim != 1 or num_candidates.size == 0:
        raise ValueError(f"num_candidates must be a non-empty 1-d array, got shape {num_candidates.shape}")
    if not np.all(np.mod(num_candidates, 1) == 0) or num_candidates.min() < 1:
        raise ValueError("num_candidates must hold integers >= 1")
    num_candidates = num_candidates.astype(np.int64)
    if num_samples < 2:
        raise ValueError(f"num_samples must be at least 2, got {num_samples}")
    keys = list(METRICS) if metrics is None else [get_metric(k).key for k in metrics]
    instances = {key: METRICS[key].instantiate() for key in keys}
    closed = {key: dict(zip(("expectation", "variance"), closed_form(key, num_candidates))) for key in keys}
    need_sampling = {key: instances[key] for key, m in closed.items() if None in m.values()}
    sampled = sample_metric_values(need_sampling, num_candidates, num_samples, seed) if need_sampling else {}
    rows = []
    for key in keys:
        e, v = closed[key]["expectation"], closed[key]["variance"]
        methods = {METHOD_CLOSED_FORM if x is not None else METHOD_MONTE_CARLO for x in (e, v)}
        if e is None:
            e = float(sampled[key].mean())
        if v is None:
            v = float(sampled[key].var(ddof=1))
        method = methods.pop() if len(methods) == 1 else f"{METHOD_CLOSED_FORM}+{METHOD_MONTE_CARLO}"
        rows.append((key, int(num_candidates.size), e, v, method))
    return pd.DataFrame(rows, columns=["metric", "n_ranks", "expectation", "variance", "method"])


def expectations_table(
    ranks: pd.DataFrame,
    dataset: str,
    split: str,
    metrics: Sequence[str] | None = None,
    num_samples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """The ``expectations.tsv`` rows of one ranks table: :func:`expectations` for sides head, tail and both.

    :param ranks: a ranks table (docs/design.md); only ``side`` and ``num_candidates`` are used
    :return: columns ``dataset, split, side, metric, n_ranks, expectation, variance, method``
    """
    for column in ("side", "num_candidates"):
        if column not in ranks.columns:
            raise ValueError(f"ranks table of {dataset}/{split} lacks column {column!r}")
    frames = []
    for side, frame in _side_frames(ranks):
        table = expectations(frame["num_candidates"].to_numpy(), metrics=metrics, num_samples=num_samples, seed=seed)
        table.insert(0, "side", side)
        frames.append(table)
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "split", split)
    out.insert(0, "dataset", dataset)
    return out


def tabulate_expectations(paths: Iterable[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """Write ``results/tables/expectations.tsv``: the per-dataset expectation tables, collated.

    Each input is one dataset's table (:func:`kgeval.lp.candidates.dataset_expectations_to_file`), computed from the
    dataset's filtered candidate counts alone, so expectations exist before (and without) any trained model.
    """
    frames = [read_tsv(path) for path in paths]
    if not frames:
        raise ValueError("tabulate_expectations needs at least one per-dataset expectations table")
    table = pd.concat(frames, ignore_index=True)
    write_tsv(table, out, sort_by=["dataset", "split", "side", "metric"])
    return table


def collate(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """Collate per-run metric tables into one table.

    :param paths: files ``.../metrics/{dataset}/{model}/{seed}/{split}.tsv`` with columns
        ``side, rank_type, metric, value`` and optionally the interval's :data:`INTERVAL_COLUMNS`
    :return: columns ``dataset, model, seed, split, side, rank_type, metric, value`` (then the interval's columns,
        where the inputs have them), sorted
    """
    frames = []
    for path in paths:
        p = Path(path)
        if len(p.parts) < 4:
            raise ValueError(f"{path}: expected .../{{dataset}}/{{model}}/{{seed}}/{{split}}.tsv")
        dataset, model, seed = p.parts[-4:-1]
        try:
            seed_int = int(seed)
        except ValueError:
            raise ValueError(f"{path}: the folder before the file must be an integer seed, got {seed!r}") from None
        frame = read_tsv(p)
        expected = ["side", "rank_type", "metric", "value"]
        if list(frame.columns) not in (expected, expected + list(INTERVAL_COLUMNS)):
            raise ValueError(f"{path}: columns {list(frame.columns)}, expected {expected} (+ {list(INTERVAL_COLUMNS)})")
        frame.insert(0, "split", p.stem)
        frame.insert(0, "seed", seed_int)
        frame.insert(0, "model", model)
        frame.insert(0, "dataset", dataset)
        frames.append(frame)
    if not frames:
        raise ValueError("collate() got no metric files")
    out = pd.concat(frames, ignore_index=True)
    keys = ["dataset", "model", "seed", "split", "side", "rank_type", "metric"]
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def collate_metrics(paths: Iterable[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """Write ``results/tables/metrics.tsv`` from the per-run metric tables (:func:`collate`)."""
    table = collate(paths)
    write_tsv(table, out, sort_by=["dataset", "model", "seed", "split", "side", "rank_type", "metric"])
    return table
