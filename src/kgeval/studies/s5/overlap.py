"""A percentile-bootstrap interval for S5's Table 2 overlap (paper 004, Sec. 6.3).

Table 2 orders the models of a dataset and seed by ``MR'`` and by the mean posterior ``y_bar`` of the test positives
under each model's selected calibration function, and reports the share of model pairs that both orders compare the
same way (:func:`kgeval.studies.s5.tables.comparison_overlap`). Both orders are estimated on one test split, so the
overlap varies with the test triples drawn; this module puts a percentile interval on it.

**What is resampled.** The test triple, as for every link-prediction interval
(:mod:`kgeval.uncertainty.bootstrap_metrics`): a drawn triple brings its head and its tail query (their ranks are
correlated: they share the triple's entities and relation) and its own posterior. Each model's MR is the mean of both
sides' ranks of the rank type ``studies.s5.rank_type`` (the ranks of the S5 run itself, ``rank_head`` and
``rank_tail`` of its ``positives.parquet``, whose mean is the ``mr`` of its summary), so per triple it is kept as a
rank sum and a rank count (:func:`positive_ranks`, :func:`triple_ranks`); ``y_bar`` is the mean of the per-triple posteriors of the selected calibrator
(``pos_posterior|<calibrator>`` of ``triple_sums.parquet``; :func:`triple_posteriors`).

**Why paired.** The overlap compares models, so every model of a dataset and seed is evaluated on the same resamples:
the models are aligned on the test triple, identified by head, relation, tail and occurrence (a test split that holds
a triple twice has two units; :func:`align_models`), and one set of counts (stream
``stream_seed(seed, dataset, str(run seed), "s5", "overlap")``) weighs all of them. Differences between models then
reflect the models, not different draws of the test set.

**Per resample** (:func:`overlap_replicates`): each model's ``MR = c @ rank_sum / c @ rank_count`` and
``y_bar = c @ posterior / n``, ``MR'`` as :func:`kgeval.studies.s5.tables.scaled_mr` computes it, and the share of
pairs ordered the same way by ``MR'`` and ``y_bar`` (ties order nothing), for a chunk of resamples at once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.studies.s5.settings import RANK_COLUMNS
from kgeval.studies.s5.triple_sums import column
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_counts, stream_seed

__all__ = [
    "TRIPLE_KEYS",
    "INTERVAL_COLUMNS",
    "AlignedModels",
    "positive_ranks",
    "triple_ranks",
    "triple_posteriors",
    "align_models",
    "overlap_replicates",
    "overlap_point",
    "overlap_interval",
    "overlap_intervals",
]

#: the columns that identify a test triple (a repeated triple is told apart by its ``occurrence``)
TRIPLE_KEYS: tuple[str, ...] = ("head", "relation", "tail", "occurrence")

#: the columns :func:`overlap_intervals` adds to ``table2_overlap.tsv``
INTERVAL_COLUMNS: tuple[str, ...] = ("overlap_low", "overlap_high", "overlap_resamples")


@dataclass(frozen=True)
class AlignedModels:
    """The models of one dataset and seed on common test triples (one row per triple, one column per model).

    :ivar models: the model keys, in column order
    :ivar keys: shape: (n, 4) head, relation, tail and occurrence of each test triple
    :ivar rank_sums: shape: (n, m) each triple's sum of its ranks (both sides)
    :ivar rank_counts: shape: (n, m) how many ranks each triple has (1 or 2)
    :ivar posteriors: shape: (n, m) each triple's posterior under the model's selected calibrator
    """

    models: tuple[str, ...]
    keys: np.ndarray
    rank_sums: np.ndarray
    rank_counts: np.ndarray
    posteriors: np.ndarray


def _occurrence(frame: pd.DataFrame, by: Sequence[str]) -> np.ndarray:
    """The occurrence of each row among the rows with equal ``by`` values (0 for the first), in row order."""
    return frame.groupby(list(by), sort=False).cumcount().to_numpy(dtype=np.int64)


def triple_ranks(ranks: pd.DataFrame, rank_type: str, source: str = "ranks table") -> pd.DataFrame:
    """Per test triple of a ranks table: the sum and the number of its ranks of ``rank_type`` (both sides).

    :param ranks: a test ranks table (``head, relation, tail, side`` and the rank column), in any row order
    :param rank_type: ``studies.s5.rank_type`` (:data:`kgeval.studies.s5.settings.RANK_COLUMNS`)
    :param source: how to name the table in errors
    :return: columns :data:`TRIPLE_KEYS`, ``rank_sum``, ``rank_count``; one row per test triple
    :raises ValueError: for an unknown rank type, a missing column, or a triple ranked on one side only
    """
    # imported here: the ranks' bootstrap loads SciPy, which importing this module must not
    from kgeval.uncertainty.bootstrap_metrics import canonical_order, triple_units

    if rank_type not in RANK_COLUMNS:
        raise ValueError(f"rank type {rank_type!r}; use one of {list(RANK_COLUMNS)} (studies.s5.rank_type)")
    rank_column = RANK_COLUMNS[rank_type]
    missing = [c for c in (*TRIPLE_KEYS[:3], "side", rank_column) if c not in ranks.columns]
    if missing:
        raise ValueError(f"{source}: no column {missing}; the overlap's interval needs a test ranks table of rank_lp")
    ordered = canonical_order(ranks)
    units = triple_units(ordered, source)
    occurrence = _occurrence(ordered, [*TRIPLE_KEYS[:3], "side"])
    triples = ordered[list(TRIPLE_KEYS[:3])].to_numpy(dtype=np.int64)
    values = ordered[rank_column].to_numpy(dtype=np.float64)
    sides = ordered["side"].to_numpy()
    keys = np.zeros((units.count, 4), dtype=np.int64)
    sums, counts = np.zeros(units.count), np.zeros(units.count)
    for side, rows in units.rows.items():
        inside = np.flatnonzero(sides == side)
        sums[rows] += values[inside]  # each triple has at most one row per side: no repeated index
        counts[rows] += 1.0
        keys[rows, :3] = triples[inside]
        keys[rows, 3] = occurrence[inside]
    out = pd.DataFrame(keys, columns=list(TRIPLE_KEYS))
    out["rank_sum"], out["rank_count"] = sums, counts
    return out


def triple_posteriors(sums: pd.DataFrame, calibrator: str, source: str = "triple sums") -> pd.DataFrame:
    """Per test triple of a run's ``triple_sums.parquet``: its posterior under ``calibrator``.

    :param sums: ``head, relation, tail`` and ``pos_posterior|<calibrator>``, one row per test triple
    :param calibrator: the run's selected calibrator (``assessment.tsv``: ``selected``, strategy ``lcwa``)
    :param source: how to name the table in errors
    :return: columns :data:`TRIPLE_KEYS`, ``posterior``
    :raises ValueError: when the calibrator's column is missing
    """
    name = column("pos_posterior", calibrator)
    missing = [c for c in (*TRIPLE_KEYS[:3], name) if c not in sums.columns]
    if missing:
        raise ValueError(
            f"{source}: no column {missing}; the selected calibrator's per-triple posteriors come from the run's "
            "assessment (rerun assess_calibration for this run so that its triple_sums.parquet holds them)"
        )
    out = sums[list(TRIPLE_KEYS[:3])].astype(np.int64).reset_index(drop=True)
    out["occurrence"] = _occurrence(out, TRIPLE_KEYS[:3])
    out["posterior"] = sums[name].to_numpy(dtype=np.float64)
    return out


def _mismatch(frame: pd.DataFrame, reference: np.ndarray, source: str, against: str) -> ValueError:
    """The error for a table whose test triples are not ``reference``'s."""
    mine = set(map(tuple, frame[list(TRIPLE_KEYS)].to_numpy().tolist()))
    theirs = set(map(tuple, reference.tolist()))
    return ValueError(
        f"{source}: its {len(mine)} test triples are not the {len(theirs)} of {against} ({len(mine - theirs)} not "
        f"there, {len(theirs - mine)} missing); the overlap's interval resamples the same test triples for every model "
        "of a dataset and seed, so rank and assess every model on the same test split (rerun this run's ranks and "
        "assess_calibration on the dataset's current test split)"
    )


def _aligned(frame: pd.DataFrame, reference: np.ndarray, source: str, against: str) -> pd.DataFrame:
    """``frame`` in the row order of ``reference`` (test triple keys), or a ValueError naming ``source``."""
    keys = list(TRIPLE_KEYS)
    if len(frame) != len(reference) or frame.duplicated(keys).any():
        raise _mismatch(frame, reference, source, against)
    order = pd.MultiIndex.from_frame(frame[keys]).get_indexer(pd.MultiIndex.from_arrays(reference.T, names=keys))
    if (order < 0).any():
        raise _mismatch(frame, reference, source, against)
    return frame.iloc[order].reset_index(drop=True)


def align_models(
    ranks: Mapping[str, pd.DataFrame],
    posteriors: Mapping[str, pd.DataFrame],
    sources: Mapping[str, tuple[str, str]] | None = None,
) -> AlignedModels:
    """The models of one dataset and seed aligned on their test triples (sorted by head, relation, tail, occurrence).

    :param ranks: model -> :func:`triple_ranks`
    :param posteriors: model -> :func:`triple_posteriors`, the same models
    :param sources: model -> how to name its (ranks, triple sums) tables in errors (their paths)
    :raises ValueError: naming the table whose test triples differ from the first model's ranks table
    """
    models = tuple(sorted(ranks))
    if not models or set(posteriors) != set(models):
        raise ValueError(f"ranks of {sorted(ranks)} and posteriors of {sorted(posteriors)}: give both for each model")
    names = {m: (sources or {}).get(m, (f"ranks of {m}", f"triple sums of {m}")) for m in models}
    first = ranks[models[0]].sort_values(list(TRIPLE_KEYS), kind="stable")
    reference = first[list(TRIPLE_KEYS)].to_numpy(dtype=np.int64)
    against = names[models[0]][0]
    columns: dict[str, list[np.ndarray]] = {"rank_sum": [], "rank_count": [], "posterior": []}
    for model in models:
        rank_source, sums_source = names[model]
        by_rank = _aligned(ranks[model], reference, rank_source, against)
        by_posterior = _aligned(posteriors[model], reference, sums_source, against)
        columns["rank_sum"].append(by_rank["rank_sum"].to_numpy(dtype=np.float64))
        columns["rank_count"].append(by_rank["rank_count"].to_numpy(dtype=np.float64))
        columns["posterior"].append(by_posterior["posterior"].to_numpy(dtype=np.float64))
    stacked = {name: np.column_stack(values) for name, values in columns.items()}
    return AlignedModels(models, reference, stacked["rank_sum"], stacked["rank_count"], stacked["posterior"])


def _scaled(mr: np.ndarray) -> np.ndarray:
    """:func:`kgeval.studies.s5.tables.scaled_mr` per row of ``mr`` (shape: (b, m)): 1 - (MR - min) / (max - min),
    all 1 where the models' MRs are equal."""
    low, high = mr.min(axis=1, keepdims=True), mr.max(axis=1, keepdims=True)
    spread = high - low
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = 1.0 - (mr - low) / spread
    return np.where(spread > 0, scaled, 1.0)


def overlap_replicates(aligned: AlignedModels, counts: np.ndarray) -> np.ndarray:
    """The overlap of the ``MR'`` and ``y_bar`` orders on each resample of a chunk (module docstring).

    :param counts: shape: (b, n) how often each test triple occurs in each resample (rows sum to n)
    :return: shape: (b,) the share of model pairs both orders compare the same way (NaN with fewer than two models)
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    m = len(aligned.models)
    if m < 2:
        return np.full(counts.shape[0], np.nan)
    mr = (counts @ aligned.rank_sums) / (counts @ aligned.rank_counts)
    posterior = (counts @ aligned.posteriors) / counts.sum(axis=1, keepdims=True)
    first, second = np.triu_indices(m, k=1)
    scaled = _scaled(mr)
    by_rank = np.sign(scaled[:, first] - scaled[:, second])
    by_posterior = np.sign(posterior[:, first] - posterior[:, second])
    shared = ((by_rank != 0) & (by_rank == by_posterior)).sum(axis=1)
    return shared / len(first)


def overlap_point(aligned: AlignedModels) -> float:
    """The overlap on the test split itself (every triple once): Table 2's ``overlap``."""
    return float(overlap_replicates(aligned, np.ones((1, len(aligned.keys))))[0])


def overlap_interval(
    aligned: AlignedModels, bootstrap: BootstrapSettings, dataset: str, seed: int
) -> tuple[float, float]:
    """The percentile interval of the overlap over ``bootstrap.resamples`` paired resamples of the test triples.

    :param dataset: the dataset key, and ``seed`` the runs' seed: with ``bootstrap.seed`` they seed the stream
    :return: ``(low, high)``; NaN with fewer than two models
    """
    if len(aligned.models) < 2:
        return float("nan"), float("nan")
    stream = stream_seed(bootstrap.seed, dataset, str(seed), "s5", "overlap")
    chunks = [overlap_replicates(aligned, c) for c in resample_counts(len(aligned.keys), bootstrap.resamples, stream)]
    return percentile_interval(np.concatenate(chunks) if chunks else np.empty(0), bootstrap.level)


def _runs(paths: Sequence[str | os.PathLike], name: str) -> dict[tuple[str, str, int], str]:
    """``.../{dataset}/{model}/{seed}/<file>`` paths keyed ``(dataset, model, seed)``."""
    out = {}
    for path in paths:
        p = Path(path)
        if len(p.parts) < 4 or not p.parts[-2].isdigit():
            raise ValueError(f"{path}: expected .../{{dataset}}/{{model}}/{{seed}}/{name}")
        out[(p.parts[-4], p.parts[-3], int(p.parts[-2]))] = str(path)
    return out


def positive_ranks(positives: pd.DataFrame, rank_type: str) -> pd.DataFrame:
    """A run's ``positives.parquet`` (``head, relation, tail, rank_head, rank_tail``) as a ranks table of
    ``rank_type``: one row per test triple and side, as :func:`triple_ranks` reads it."""
    sides = [s for s in ("head", "tail") if f"rank_{s}" in positives.columns]
    if not sides:
        raise ValueError("positives.parquet has no rank_head or rank_tail column: rerun assess_calibration for the run")
    keys = positives[list(TRIPLE_KEYS[:3])]
    return pd.concat(
        [keys.assign(side=s, **{RANK_COLUMNS[rank_type]: positives[f"rank_{s}"].to_numpy(np.float64)}) for s in sides],
        ignore_index=True,
    )


def _read_run(
    positives_path: str, sums_path: str, calibrator: str, rank_type: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One run's :func:`triple_ranks` (from its ``positives.parquet``) and :func:`triple_posteriors`, reading only
    the columns they need."""
    try:
        positives = pd.read_parquet(positives_path, columns=[*TRIPLE_KEYS[:3], "rank_head", "rank_tail"])
    except (KeyError, ValueError) as error:
        raise ValueError(f"{positives_path}: no rank_head and rank_tail columns; rerun assess_calibration for this "
                         "run") from error
    ranks = positive_ranks(positives, rank_type)
    sums = pd.read_parquet(sums_path, columns=[*TRIPLE_KEYS[:3], column("pos_posterior", calibrator)])
    return triple_ranks(ranks, rank_type, positives_path), triple_posteriors(sums, calibrator, sums_path)


def overlap_intervals(
    per_model: pd.DataFrame,
    positives_paths: Sequence[str | os.PathLike],
    triple_sums_paths: Sequence[str | os.PathLike],
    rank_type: str,
    bootstrap: BootstrapSettings,
) -> pd.DataFrame:
    """Per dataset and seed of Table 2: the overlap's percentile interval over paired resamples of the test triples.

    :param per_model: the per-model part of :func:`kgeval.studies.s5.tables.table_comparison` (``dataset, seed,
        model, calibrator``): its models, and each one's selected calibrator
    :param positives_paths: the runs' ``.../{dataset}/{model}/{seed}/positives.parquet`` (their test ranks)
    :param triple_sums_paths: ``.../{dataset}/{model}/{seed}/triple_sums.parquet`` of the same runs
    :param rank_type: ``studies.s5.rank_type``, the rank of the MR
    :return: columns ``dataset, seed`` and :data:`INTERVAL_COLUMNS` (``overlap_resamples``: the resamples drawn,
        0 with fewer than two models, whose bounds are NaN)
    :raises ValueError: for a model of ``per_model`` without both files, or whose test triples differ from the others'
    """
    if rank_type not in RANK_COLUMNS:
        raise ValueError(f"rank type {rank_type!r}; use one of {list(RANK_COLUMNS)} (studies.s5.rank_type)")
    ranks_of, sums_of = _runs(positives_paths, "positives.parquet"), _runs(triple_sums_paths, "triple_sums.parquet")
    rows = []
    for (dataset, seed), group in per_model.groupby(["dataset", "seed"], sort=True):
        ranks, posteriors, sources = {}, {}, {}
        for run in group.itertuples(index=False):
            key = (str(dataset), str(run.model), int(seed))
            if key not in ranks_of or key not in sums_of:
                lacking = [n for n, k in (("positives.parquet", ranks_of), ("triple_sums.parquet", sums_of)) if key not in k]
                where = "/".join(map(str, key))
                raise ValueError(f"run {where}: no {' and no '.join(lacking)} given for Table 2's overlap interval")
            sources[run.model] = (ranks_of[key], sums_of[key])
            ranks[run.model], posteriors[run.model] = _read_run(*sources[run.model], str(run.calibrator), rank_type)
        aligned = align_models(ranks, posteriors, sources)
        low, high = overlap_interval(aligned, bootstrap, str(dataset), int(seed))
        drawn = bootstrap.resamples if len(aligned.models) > 1 else 0
        rows.append((dataset, seed, low, high, drawn))
    return pd.DataFrame(rows, columns=["dataset", "seed", *INTERVAL_COLUMNS])
