"""S3 metrics per split and the paper's Tables 2 and 3, with size-adjusted columns the paper could not have.

Per-split metrics (:func:`split_metrics`): the test ranks of one run are joined with the mapping features by
``(id1, id2)``; :func:`kgeval.ea.evaluation.ea_metrics` (PyKEEN's metric classes) is applied to every split subset:
kind ``all`` (every test mapping), ``name`` (same, close, different) and ``attr`` (small, medium, large; absent
when the dataset has no attributes). An empty split has no rows.

Why AMRI and ZMRR: Hits@1 and MRR of splits of very different sizes, and of settings whose test sets differ in
size (97% of the mappings under a 2% seed set, 70% under 20%), are not on a common scale. AMRI (the adjusted mean
rank index, 0 for random ranking, 1 for perfect) removes the dependence on the number of candidates; ZMRR (MRR as a
z-score against random ranking) also grows with the number of test mappings, i.e. it says how sure one can be that a
split is ranked better than by chance.

The wide tables (:func:`wide_table`) hold one row per (dataset, setting, model), the mean over seeds of: Hits@1 per
name split and per attribute split, Hits@1, Hits@5, MRR over all test mappings (the paper's columns), then AMRI and
ZMRR per split and overall, the number of test mappings per split, and ``too_small``: the splits with fewer than
:data:`MIN_SPLIT_SIZE` (30) test mappings, whose values are too noisy to read a direction from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.ea.evaluation import ea_metrics
from kgeval.io import read_tsv
from kgeval.studies.s3.features import ATTR_SPLITS, NAME_SPLITS, SPLIT_KINDS

__all__ = [
    "S3_METRICS",
    "MIN_SPLIT_SIZE",
    "RUN_KEYS",
    "too_small_splits",
    "split_metrics",
    "parse_run_path",
    "collate_runs",
    "wide_table",
    "table2",
    "table3",
    "setting_label",
]

#: the metrics computed per split
S3_METRICS: tuple[str, ...] = ("hits@1", "hits@5", "hits@10", "mrr", "mr", "amri", "zmrr")
#: splits with fewer test mappings than this are marked too small (``too_small``) in the tables and figures
MIN_SPLIT_SIZE: int = 30
#: the columns that identify one run
RUN_KEYS: tuple[str, ...] = ("dataset", "model", "bias", "train_ratio", "seed")

_RANK_COLUMNS = (
    "side",
    "rank_optimistic",
    "rank_realistic",
    "rank_pessimistic",
    "rank_nondeterministic",
    "num_candidates",
)
_ALL_SPLITS = (*NAME_SPLITS, *ATTR_SPLITS, "all")


def split_metrics(
    ranks: pd.DataFrame, features: pd.DataFrame, metrics: Sequence[str] = S3_METRICS, source: str = "S3 ranks"
) -> pd.DataFrame:
    """Metrics of one run on every split of its test mappings.

    :param ranks: the run's ranks table (with ``id1, id2``; one row per test mapping and side)
    :param features: the features table (``id1, id2, name_split, attr_split``)
    :returns: columns ``split_kind, split, num_test, side, rank_type, metric, value``
    """
    columns = {"name": "name_split", "attr": "attr_split"}
    joined = ranks.merge(
        features[["id1", "id2", *columns.values()]], on=["id1", "id2"], how="left", validate="m:1", indicator=True
    )
    if (joined["_merge"] != "both").any():
        bad = joined.loc[joined["_merge"] != "both", ["id1", "id2"]].iloc[0].tolist()
        raise ValueError(f"{source}: ranked pair {bad} is not a reference alignment of the features table")
    frames = []
    for kind, splits in SPLIT_KINDS.items():
        if kind == "attr" and features["attr_split"].isna().all():
            continue
        for split in splits:
            subset = joined if kind == "all" else joined[joined[columns[kind]] == split]
            if subset.empty:
                continue
            table = ea_metrics(subset[list(_RANK_COLUMNS)], metrics=metrics, source=f"{source} ({kind}={split})")
            num_test = len(subset[["id1", "id2"]].drop_duplicates())
            table.insert(0, "num_test", num_test)
            table.insert(0, "split", split)
            table.insert(0, "split_kind", kind)
            frames.append(table)
    if not frames:
        return pd.DataFrame(columns=["split_kind", "split", "num_test", "side", "rank_type", "metric", "value"])
    return pd.concat(frames, ignore_index=True)


_RUN_PATTERN = re.compile(
    r"(?P<dataset>[^/]+)/runs/(?P<model>[^/]+)/(?P<bias>[^/]+)/(?P<train_ratio>[^/]+)/(?P<seed>\d+)/[^/]+$"
)


def parse_run_path(path: str | os.PathLike) -> dict[str, object]:
    """``{dataset, model, bias, train_ratio, seed}`` from ``.../{dataset}/runs/{model}/{bias}/{ratio}/{seed}/<file>``."""
    match = _RUN_PATTERN.search(Path(path).as_posix())
    if match is None:
        raise ValueError(f"{path}: expected a path ending in <dataset>/runs/<model>/<bias>/<ratio>/<seed>/<file>")
    out: dict[str, object] = dict(match.groupdict())
    out["train_ratio"] = float(out["train_ratio"])
    out["seed"] = int(out["seed"])
    return out


def collate_runs(metric_paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """Stack the per-run split metrics with the run keys read from each path."""
    frames = []
    for path in metric_paths:
        table = read_tsv(path)
        keys = parse_run_path(path)
        for position, key in enumerate(RUN_KEYS):
            table.insert(position, key, keys[key])
        frames.append(table)
    if not frames:
        raise ValueError("collate_runs: no input tables")
    frames = [f for f in frames if len(f)] or frames[:1]
    return pd.concat(frames, ignore_index=True)


def setting_label(bias: str, train_ratio: float) -> str:
    """A short label such as ``both 2%``."""
    return f"{bias} {100 * float(train_ratio):g}%"


def wide_table(
    long: pd.DataFrame,
    status: pd.DataFrame | None = None,
    side: str = "left",
    rank_type: str = "realistic",
    digits: int = 4,
) -> pd.DataFrame:
    """One row per (dataset, bias, train_ratio, model): the paper's columns plus AMRI, ZMRR and split sizes.

    :param long: the collated split metrics (:func:`collate_runs`)
    :param status: the collated run status (``dataset, model, bias, train_ratio, seed, status, reason``); skipped
        runs then appear with a ``note`` and empty values
    :param side: ``left`` (graph 1 -> graph 2, as OpenEA evaluates), ``right`` or ``both``
    :param rank_type: the rank type of every value
    :returns: columns ``dataset, bias, train_ratio, model, num_seeds``, ``hits@1_<split>`` for the six splits and
        ``all``, ``hits@5_all``, ``mrr_all``, ``amri_<split>``, ``zmrr_<split>``, ``n_<split>`` (mean number of test
        mappings), ``note``
    """
    keys = ["dataset", "bias", "train_ratio", "model"]
    part = long[(long["side"] == side) & (long["rank_type"] == rank_type)]
    wanted = {"hits@1": _ALL_SPLITS, "hits@5": ("all",), "mrr": ("all",), "amri": _ALL_SPLITS, "zmrr": _ALL_SPLITS}
    columns = [f"{m}_{s}" for m, splits in wanted.items() for s in splits] + [f"n_{s}" for s in _ALL_SPLITS]
    mean = part.groupby([*keys, "split", "metric"], as_index=False)["value"].mean()
    sizes = part.drop_duplicates([*keys, "seed", "split"]).groupby([*keys, "split"], as_index=False)["num_test"].mean()
    seeds = part.groupby(keys, as_index=False)["seed"].nunique().rename(columns={"seed": "num_seeds"})
    rows = {}
    for record in mean.itertuples(index=False):
        rows.setdefault(tuple(getattr(record, k) for k in keys), {})[f"{record.metric}_{record.split}"] = record.value
    for record in sizes.itertuples(index=False):
        rows.setdefault(tuple(getattr(record, k) for k in keys), {})[f"n_{record.split}"] = record.num_test
    notes: dict[tuple, str] = {}
    if status is not None and len(status):
        for record in status.itertuples(index=False):
            key = (record.dataset, record.bias, float(record.train_ratio), record.model)
            rows.setdefault(key, {})
            if record.status != "ok":
                notes[key] = f"{record.status}: {record.reason}"
    out = []
    for key, values in rows.items():
        row = dict(zip(keys, key))
        row.update({c: values.get(c, np.nan) for c in columns})
        row["note"] = notes.get(key, "")
        out.append(row)
    table = pd.DataFrame(out, columns=[*keys, *columns, "note"])
    table["too_small"] = [too_small_splits({s: row[f"n_{s}"] for s in _ALL_SPLITS}) for _, row in table.iterrows()]
    table = table.merge(seeds, on=keys, how="left")
    table["num_seeds"] = table["num_seeds"].fillna(0).astype(int)
    value_columns = [c for c in columns if not c.startswith("n_")]
    table[value_columns] = table[value_columns].astype(float).round(digits)
    return table[[*keys, "num_seeds", *columns, "too_small", "note"]]


def too_small_splits(sizes: dict[str, float]) -> str:
    """The splits (comma-separated, in table order) that hold test mappings but fewer than :data:`MIN_SPLIT_SIZE`;
    an empty split (NaN or 0) is listed too when it is a split of a kind that has other members."""
    out = []
    for split in _ALL_SPLITS:
        n = sizes.get(split)
        if n is None or (isinstance(n, float) and np.isnan(n)):
            continue
        if n < MIN_SPLIT_SIZE:
            out.append(split)
    return ", ".join(out)


def _order(table: pd.DataFrame, models: Sequence[str] | None) -> pd.DataFrame:
    from kgeval.studies.s3.sampling import BIASES

    table = table.assign(
        _bias=table["bias"].map({b: i for i, b in enumerate(BIASES)}),
        _model=table["model"].map({m: i for i, m in enumerate(models or sorted(table["model"].unique()))}),
    )
    table = table.sort_values(["dataset", "_bias", "train_ratio", "_model"], ascending=[True, True, False, True])
    return table.drop(columns=["_bias", "_model"]).reset_index(drop=True)


def table2(
    wide: pd.DataFrame,
    ideal: tuple[str, float],
    industrial: tuple[str, float],
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The paper's Table 2: the ideal and the industrial context per dataset and model.

    :param wide: :func:`wide_table`
    :param ideal: ``(bias, train_ratio)`` of the ideal context (the paper: no bias, 20%)
    :param industrial: ``(bias, train_ratio)`` of the industrial context (the paper: both biases, 2%)
    :returns: the rows of the two contexts with a leading ``context`` column, sorted by dataset, context, model
    """
    frames = []
    for context, (bias, ratio) in (("ideal", ideal), ("industrial", industrial)):
        part = wide[(wide["bias"] == bias) & np.isclose(wide["train_ratio"].astype(float), float(ratio))]
        frames.append(_order(part, models).assign(context=context))
    table = pd.concat(frames, ignore_index=True)
    table = table[["dataset", "context", *[c for c in table.columns if c not in ("dataset", "context")]]]
    order = {"ideal": 0, "industrial": 1}
    model_order = {m: i for i, m in enumerate(models or sorted(table["model"].unique()))}
    return (
        table.assign(_c=table["context"].map(order), _m=table["model"].map(model_order))
        .sort_values(["dataset", "_c", "_m"], kind="stable")
        .drop(columns=["_c", "_m"])
        .reset_index(drop=True)
    )


def table3(wide: pd.DataFrame, models: Sequence[str] | None = None) -> pd.DataFrame:
    """The paper's Table 3 (ablations of size, name bias, attribute bias; plus both biases): every setting, ordered
    by dataset, bias (none, name, attr, both), training ratio (largest first) and model."""
    return _order(wide, models)
