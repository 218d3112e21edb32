"""Pipeline steps of S3 (paper 002), file in / file out; each ``scripts/s3/*.py`` calls one of them.

Files (``{dataset}`` = an S3 dataset key, ``{seed}`` = sampling and training seed, ``{bias}`` in none/name/attr/both,
``{ratio}`` = the training ratio as written in the config, e.g. ``0.02``):

- ``results/s3/{dataset}/features.tsv`` (:func:`features_to_files`): one row per reference alignment - ids,
  labels, best names, ``s_name``, ``n_attr1, n_attr2, n_attr``, ``name_split_paper``, ``name_split``,
  ``attr_split``; ``results/s3/{dataset}/split_sizes.tsv``: ``dataset, kind, split, definition, num_alignments,
  share, names_source, attributes_source``.
- ``results/s3/{dataset}/seeds/{seed}/seeds.tsv`` (:func:`seed_sets_to_files`): the seed mappings of every setting,
  ``bias, train_ratio, role, id1, id2`` (role train/valid; every other mapping is a test mapping);
  ``.../status.tsv``: per setting ``status`` (ok / skipped) and the reason, sizes; ``.../bias_check.tsv``: per
  setting and role the mean ``s_name``, mean ``n_attr`` and split shares (:func:`kgeval.studies.s3.sampling.bias_summary`).
- ``results/s3/{dataset}/runs/{model}/{bias}/{ratio}/{seed}/`` (:func:`run_to_files`): ``ranks.parquet`` (EA ranks
  table of the test mappings plus ``id1, id2``), ``split_metrics.tsv`` (:func:`kgeval.studies.s3.tables.split_metrics`),
  ``status.json`` (status, reason, sizes, timings, final loss, validation Hits@1).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_json, write_parquet, write_tsv
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.studies.s3.data import S3Pair, load_s3_pair
from kgeval.studies.s3.features import mapping_features, split_sizes
from kgeval.studies.s3.grid import NOT_RUN_REASON
from kgeval.studies.s3.sampling import MissingFeatureError, bias_summary, sample_roles, seed_set_sizes
from kgeval.studies.s3.tables import RUN_KEYS, collate_runs, parse_run_path, split_metrics, table2, table3, wide_table
from kgeval.tables import RANK_COLUMNS

__all__ = [
    "RANKS_COLUMNS",
    "load_pair_for",
    "features_to_files",
    "seed_sets_to_files",
    "MethodRun",
    "RunFiles",
    "SeedFiles",
    "SettingInputs",
    "run_to_files",
    "evaluate_model_to_files",
    "collate_to_files",
    "collate_tables_to_file",
    "collate_bias_to_file",
    "tables_to_files",
]

logger = logging.getLogger(__name__)

#: columns of an S3 ranks table (the EA ranks table plus the pair's ids)
RANKS_COLUMNS: tuple[str, ...] = ("id1", "id2", "source", "target", "side", *RANK_COLUMNS)


def load_pair_for(
    key: str, source_spec: Mapping[str, Any], settings: Mapping[str, Any] | None, data_dir: str | None
) -> S3Pair:
    """Load the S3 pair of a dataset key with its ``studies.s3.datasets`` settings (name noise)."""
    settings = settings or {}
    return load_s3_pair(key, source_spec, data_dir, name_noise=settings.get("name_noise"))


def features_to_files(
    key: str,
    source_spec: Mapping[str, Any],
    settings: Mapping[str, Any],
    data_dir: str | None,
    features_out: str | os.PathLike,
    sizes_out: str | os.PathLike,
) -> pd.DataFrame:
    """Compute the mapping features and split sizes of one dataset and write both tables.

    :param settings: ``studies.s3.datasets.<key>``: ``k1``, ``k2``, ``different_below``, ``name_noise``
    """
    s3pair = load_pair_for(key, source_spec, settings, data_dir)
    k1, k2 = settings.get("k1"), settings.get("k2")
    different_below = settings.get("different_below")
    features = mapping_features(s3pair, k1, k2, different_below)
    logger.info("%s: names - %s; attributes - %s", key, s3pair.names_source, s3pair.attributes_source)
    if not s3pair.has_attributes:
        logger.warning(
            "%s has no attributes: the attribute split and the attribute-biased settings (attr, both) are skipped",
            key,
        )
    else:
        q = np.nanquantile(features["n_attr"], [1 / 3, 2 / 3])
        logger.info("%s: n_attr tertiles %.3g, %.3g (thresholds in use: k1=%s, k2=%s)", key, q[0], q[1], k1, k2)
    sizes = split_sizes(features, k1, k2, different_below)
    for row in sizes.itertuples(index=False):
        if row.num_alignments == 0:
            logger.warning("%s: split %s/%s (%s) is empty", key, row.kind, row.split, row.definition)
    sizes.insert(0, "dataset", key)
    sizes["names_source"] = s3pair.names_source
    sizes["attributes_source"] = s3pair.attributes_source
    write_tsv(features, features_out, sort_by=["id1", "id2"])
    write_tsv(sizes, sizes_out, sort_by=[])
    return features


def seed_sets_to_files(
    features_path: str | os.PathLike,
    biases: Sequence[str],
    train_ratios: Sequence[float],
    valid_fraction: float,
    seed: int,
    seeds_out: str | os.PathLike,
    status_out: str | os.PathLike,
    bias_out: str | os.PathLike,
) -> pd.DataFrame:
    """Sample the seed mappings of every (bias, training ratio) for one seed; write them, their status and the
    bias check. A bias that needs attributes on a dataset without them is written as ``skipped`` with the reason."""
    features = read_tsv(features_path)
    name_split = features["name_split"].to_numpy(dtype=object)
    attr_split = features["attr_split"].astype(object).where(features["attr_split"].notna(), None).to_numpy()
    seed_frames, status_rows, bias_frames = [], [], []
    for bias in biases:
        for ratio in train_ratios:
            ratio = float(ratio)
            try:
                roles = sample_roles(name_split, attr_split, bias, ratio, valid_fraction, seed)
            except MissingFeatureError as error:
                n_train, n_valid = seed_set_sizes(len(features), ratio, valid_fraction)
                reason = f"{error}; the attribute split is skipped, not faked"
                logger.warning("bias %s, ratio %g: skipped (%s)", bias, ratio, reason)
                status_rows.append((bias, ratio, "skipped", reason, n_train, n_valid, len(features) - n_train - n_valid))
                continue
            chosen = roles != "test"
            seed_frames.append(
                pd.DataFrame(
                    {
                        "bias": bias,
                        "train_ratio": ratio,
                        "role": roles[chosen],
                        "id1": features["id1"].to_numpy()[chosen],
                        "id2": features["id2"].to_numpy()[chosen],
                    }
                )
            )
            counts = {role: int((roles == role).sum()) for role in ("train", "valid", "test")}
            status_rows.append((bias, ratio, "ok", "", counts["train"], counts["valid"], counts["test"]))
            summary = bias_summary(features, roles)
            summary.insert(0, "train_ratio", ratio)
            summary.insert(0, "bias", bias)
            bias_frames.append(summary)
    seeds = (
        pd.concat(seed_frames, ignore_index=True)
        if seed_frames
        else pd.DataFrame(columns=["bias", "train_ratio", "role", "id1", "id2"])
    )
    status = pd.DataFrame(
        status_rows, columns=["bias", "train_ratio", "status", "reason", "num_train", "num_valid", "num_test"]
    )
    write_tsv(seeds, seeds_out, sort_by=["bias", "train_ratio", "role", "id1", "id2"])
    write_tsv(status, status_out, sort_by=["bias", "train_ratio"])
    bias_table = pd.concat(bias_frames, ignore_index=True) if bias_frames else pd.DataFrame(columns=["bias"])
    write_tsv(bias_table, bias_out, sort_by=[c for c in ("bias", "train_ratio", "role") if c in bias_table])
    return seeds


def _setting_rows(table: pd.DataFrame, bias: str, train_ratio: float) -> pd.DataFrame:
    return table[(table["bias"] == bias) & np.isclose(table["train_ratio"].astype(float), float(train_ratio))]


def _empty_ranks() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="int64" if c.startswith("id") else "object") for c in RANKS_COLUMNS})


@dataclass(frozen=True)
class MethodRun:
    """One method's runs on one (dataset, seed): what every setting's run shares.

    :ivar model: the method's key (``studies.s3.models``)
    :ivar model_spec: its config entry
    :ivar seed: sampling and training seed
    :ivar candidates: the candidate set ranked against (``all`` or ``test``)
    :ivar memory_budget_mb: bound on one score block
    :ivar device: where to train and rank
    :ivar side: the direction(s) ranked - ``left`` (graph 1 -> graph 2), ``right`` or ``both``
    :ivar settings: the (bias, training ratio) settings this method runs (``studies.s3.claim_settings_only``), or
        ``None`` for every setting; the others are written as skipped
    """

    model: str
    model_spec: Mapping[str, Any]
    seed: int
    candidates: str = "all"
    memory_budget_mb: float = MEMORY_BUDGET_MB
    device: str | None = None
    side: str = "both"
    settings: tuple[tuple[str, float], ...] | None = None

    def runs(self, bias: str, train_ratio: float) -> bool:
        """Whether this method runs the setting (bias, train_ratio)."""
        if self.settings is None:
            return True
        return any(b == bias and np.isclose(r, float(train_ratio)) for b, r in self.settings)


@dataclass(frozen=True)
class SettingInputs:
    """What the runs of every setting read: the loaded pair, its features and the seed sets.

    :ivar s3pair: the loaded pair
    :ivar features: its features table
    :ivar seeds: the seed mappings of every setting (``seeds.tsv``)
    :ivar seed_status: the status of every setting (``status.tsv`` next to it)
    :ivar built: the training-free scorers built for the pair, shared by its settings (``models.fit_scorer``)
    """

    s3pair: S3Pair
    features: pd.DataFrame
    seeds: pd.DataFrame
    seed_status: pd.DataFrame
    built: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunFiles:
    """The output files of one run (or, in :func:`evaluate_model_to_files`, lists of them, one entry per run)."""

    ranks: Any
    metrics: Any
    status: Any


def _write_skipped(status: dict[str, Any], state: str, reason: str, files: RunFiles) -> dict[str, Any]:
    """A skipped setting: empty ranks and metrics tables, its state and the reason in ``status.json``."""
    logger.warning(
        "%s %s %s %g: skipped - %s", status["dataset"], status["model"], status["bias"], status["train_ratio"], reason
    )
    status.update(status=state, reason=reason)
    write_parquet(_empty_ranks(), files.ranks)
    write_tsv(
        pd.DataFrame(columns=["split_kind", "split", "num_test", "side", "rank_type", "metric", "value"]),
        files.metrics,
    )
    write_json(status, files.status)
    return status


def _setting_pairs(inputs: SettingInputs, bias: str, train_ratio: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A setting's train, valid and test mappings, each (m, 2) ``id1, id2``; test = every mapping not a seed."""
    chosen = _setting_rows(inputs.seeds, bias, train_ratio)
    features = inputs.features
    train = chosen.loc[chosen["role"] == "train", ["id1", "id2"]].to_numpy(dtype=np.int64).reshape(-1, 2)
    valid = chosen.loc[chosen["role"] == "valid", ["id1", "id2"]].to_numpy(dtype=np.int64).reshape(-1, 2)
    is_test = ~pd.MultiIndex.from_frame(features[["id1", "id2"]]).isin(pd.MultiIndex.from_frame(chosen[["id1", "id2"]]))
    test = features.loc[is_test, ["id1", "id2"]].to_numpy(dtype=np.int64).reshape(-1, 2)
    return train, valid, test


def run_to_files(
    inputs: SettingInputs, method: MethodRun, bias: str, train_ratio: float, files: RunFiles
) -> dict[str, Any]:
    """Train one method on one setting's training mappings, rank its test mappings, compute the split metrics.

    A setting marked ``skipped`` by :func:`seed_sets_to_files` writes an empty ranks table, an empty metrics table
    and the reason in ``status.json``.
    """
    from kgeval.studies.s3.models import fit_scorer, rank_test_pairs, ranks_table

    s3pair, model, seed, side = inputs.s3pair, method.model, method.seed, method.side
    key = s3pair.pair.name
    setting_status = _setting_rows(inputs.seed_status, bias, train_ratio)
    if setting_status.empty:
        raise ValueError(f"{key}: the seed sets hold no setting bias={bias}, train_ratio={train_ratio}")
    status: dict[str, Any] = {
        "dataset": key,
        "model": model,
        "bias": bias,
        "train_ratio": float(train_ratio),
        "seed": int(seed),
        "candidates": method.candidates,
        "side": side,
    }
    row = setting_status.iloc[0]
    status.update(num_train=int(row["num_train"]), num_valid=int(row["num_valid"]), num_test=int(row["num_test"]))
    if row["status"] != "ok":
        return _write_skipped(status, str(row["status"]), str(row["reason"]), files)
    if not method.runs(bias, train_ratio):
        return _write_skipped(status, "skipped", NOT_RUN_REASON.format(model=model), files)
    train, valid, test = _setting_pairs(inputs, bias, train_ratio)

    logger.info("%s: training %s on %d mappings (bias %s, ratio %g, seed %d)", key, model, len(train), bias, train_ratio, seed)
    scorer, info = fit_scorer(
        model, s3pair, train, method.model_spec, seed, device=method.device, valid_pairs=valid, built=inputs.built
    )
    start = time.perf_counter()
    pair = s3pair.pair
    sides = ("left", "right") if side == "both" else (side,)
    budget = method.memory_budget_mb
    results = rank_test_pairs(scorer, test, pair.num_entities1, pair.num_entities2, method.candidates, budget, sides)
    ranks = ranks_table(results, test, s3pair)
    rank_seconds = time.perf_counter() - start
    metrics = split_metrics(ranks, inputs.features, source=str(files.ranks))
    if side != "both":  # with one ranked direction, "both" would only repeat it
        metrics = metrics[metrics["side"] == side]
    valid_hits = float("nan")
    if len(valid):
        valid_results = rank_test_pairs(scorer, valid, pair.num_entities1, pair.num_entities2, "test", budget, sides)
        valid_hits = float(np.mean([(r.rank_realistic <= 1).mean() for r in valid_results.values()]))
    losses = info.get("losses") or []
    status.update(
        status="ok",
        reason="",
        train_seconds=float(info.get("train_seconds", 0.0)),
        rank_seconds=rank_seconds,
        num_epochs=len(losses),
        final_loss=float(losses[-1]) if losses else None,
        valid_hits_at_1=valid_hits,
        **{k: v for k, v in info.items() if k not in ("losses", "train_seconds")},
    )
    logger.info(
        "%s %s %s %g: trained in %.1f s, ranked %d test mappings in %.1f s",
        key, model, bias, train_ratio, status["train_seconds"], len(test), rank_seconds,
    )
    write_parquet(ranks[list(RANKS_COLUMNS)], files.ranks)
    write_tsv(metrics, files.metrics, sort_by=["split_kind", "split", "side", "rank_type", "metric"])
    write_json(status, files.status)
    return status


@dataclass(frozen=True)
class SeedFiles:
    """A pair's features table and one seed's seed sets (``seeds.tsv`` and ``status.tsv``)."""

    features: str | os.PathLike
    seeds: str | os.PathLike
    seed_status: str | os.PathLike


def evaluate_model_to_files(
    key: str,
    source_spec: Mapping[str, Any],
    settings: Mapping[str, Any],
    data_dir: str | None,
    inputs: SeedFiles,
    method: MethodRun,
    outputs: RunFiles,
) -> list[dict[str, Any]]:
    """Run :func:`run_to_files` for every setting of one (dataset, method, seed), loading the pair once.

    The setting of each run (bias, training ratio) is read from its output paths
    (``.../{dataset}/runs/{model}/{bias}/{ratio}/{seed}/<file>``); the three path lists of ``outputs`` must name
    the same runs.
    """
    ranks_paths, metrics_paths, status_paths = outputs.ranks, outputs.metrics, outputs.status
    if not len(ranks_paths) == len(metrics_paths) == len(status_paths):
        raise ValueError("evaluate_model_to_files: the ranks, metrics and status path lists differ in length")
    s3pair = load_pair_for(key, source_spec, settings, data_dir)
    loaded = SettingInputs(s3pair, read_tsv(inputs.features), read_tsv(inputs.seeds), read_tsv(inputs.seed_status))
    model, seed = method.model, method.seed
    out = []
    for ranks_out, metrics_out, status_out in zip(ranks_paths, metrics_paths, status_paths):
        run = parse_run_path(ranks_out)
        if parse_run_path(metrics_out) != run or parse_run_path(status_out) != run:
            raise ValueError(f"{ranks_out}, {metrics_out} and {status_out} do not name the same run")
        if run["dataset"] != key or run["model"] != model or run["seed"] != int(seed):
            raise ValueError(f"{ranks_out} is not a run of dataset {key}, model {model}, seed {seed}")
        files = RunFiles(ranks_out, metrics_out, status_out)
        out.append(run_to_files(loaded, method, str(run["bias"]), float(run["train_ratio"]), files))
    return out


def collate_to_files(
    metric_paths: Sequence[str | os.PathLike],
    status_paths: Sequence[str | os.PathLike],
    metrics_out: str | os.PathLike,
    status_out: str | os.PathLike,
) -> pd.DataFrame:
    """Stack every run's split metrics and status into ``split_metrics.tsv`` and ``runs.tsv``."""
    long = collate_runs(metric_paths)
    rows = []
    for path in status_paths:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        keys = parse_run_path(path)
        rows.append(
            {
                **keys,
                "status": data.get("status", ""),
                "reason": data.get("reason", ""),
                "num_train": data.get("num_train"),
                "num_valid": data.get("num_valid"),
                "num_test": data.get("num_test"),
                "train_seconds": data.get("train_seconds"),
                "rank_seconds": data.get("rank_seconds"),
                "num_epochs": data.get("num_epochs"),
                "final_loss": data.get("final_loss"),
                "valid_hits_at_1": data.get("valid_hits_at_1"),
            }
        )
    status = pd.DataFrame(rows)
    write_tsv(long, metrics_out, sort_by=[*RUN_KEYS, "split_kind", "split", "side", "rank_type", "metric"])
    write_tsv(status, status_out, sort_by=list(RUN_KEYS))
    return long


def collate_tables_to_file(paths: Sequence[str | os.PathLike], out: str | os.PathLike, sort_by: Sequence[str]) -> pd.DataFrame:
    """Concatenate per-dataset tables (split sizes) that already carry their ``dataset`` column."""
    table = pd.concat([read_tsv(p) for p in paths], ignore_index=True)
    write_tsv(table, out, sort_by=list(sort_by))
    return table


def collate_bias_to_file(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """Stack the per-(dataset, seed) bias checks; dataset and seed come from ``.../{dataset}/seeds/{seed}/<file>``."""
    frames = []
    for path in paths:
        parts = os.path.normpath(path).split(os.sep)
        table = read_tsv(path)
        if table.empty or "role" not in table:
            continue
        table.insert(0, "seed", int(parts[-2]))
        table.insert(0, "dataset", parts[-4])
        frames.append(table)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["dataset", "seed", "bias"])
    write_tsv(table, out, sort_by=[c for c in ("dataset", "bias", "train_ratio", "seed", "role") if c in table])
    return table


def tables_to_files(
    metrics_path: str | os.PathLike,
    status_path: str | os.PathLike,
    out: str | os.PathLike,
    which: str,
    ideal: Mapping[str, Any],
    industrial: Mapping[str, Any],
    models: Sequence[str],
    side: str = "left",
    rank_type: str = "realistic",
) -> pd.DataFrame:
    """Write the paper's Table 2 (``which = table2``) or Table 3 (``table3``) from the collated runs."""
    long = read_tsv(metrics_path)
    status = read_tsv(status_path)
    wide = wide_table(long, status, side=side, rank_type=rank_type)
    if which == "table2":
        table = table2(
            wide,
            (ideal["bias"], float(ideal["train_ratio"])),
            (industrial["bias"], float(industrial["train_ratio"])),
            models,
        )
    elif which == "table3":
        table = table3(wide, models)
    else:
        raise ValueError(f"which must be table2 or table3, got {which!r}")
    write_tsv(table, out, sort_by=[])
    return table
