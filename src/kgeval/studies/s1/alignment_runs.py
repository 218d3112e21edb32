"""Pipeline steps of the EA subsystem, file in / file out (each test-size script in ``scripts/s1/`` calls one).

Files (``{key}`` = ``ea_datasets`` key, ``{k}`` = number of training alignments, ``{seed}`` = split seed):

- ``results/ea/{key}/summary.tsv``: :func:`summarize_ea_pair` (one row, the counts of :meth:`EAPair.summary`);
- ``results/ea/{key}/gcn_align/{k}/{seed}/representations.pt``: ``torch.save({"left": (n1, d), "right": (n2, d)})``;
  ``split.tsv`` (``role, position, id1, id2, label1, label2``; ``role`` in train/test, test rows in nested order),
  ``losses.tsv`` (``epoch, loss``), ``config.json``, ``timing.json``: :func:`train_ea_to_files`;
- ``results/ea/{key}/gcn_align/{k}/{seed}/ranks.parquet``: :func:`ea_ranks_to_file`, the ranks of the whole test
  pool (every alignment not used for training) in the EA ranks-table format of :mod:`kgeval.ea.evaluation`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from kgeval.ea.data import EAPair, load_ea_pair
from kgeval.ea.gcn_align import GCNAlignConfig, train_gcn_align
from kgeval.studies.s1.splits import split_alignment
from kgeval.io import atomic_path, read_tsv, write_json, write_parquet, write_tsv
from kgeval.config import MEMORY_BUDGET_MB

__all__ = [
    "split_frame",
    "read_split",
    "summarize_ea_pair",
    "TrainingFiles",
    "train_ea_to_files",
    "load_representations",
    "ea_ranks_to_file",
]


def split_frame(pair: EAPair, train: np.ndarray, pool: np.ndarray) -> pd.DataFrame:
    """The ``split.tsv`` table: one row per pair with its role and position (test rows in nested order)."""
    frames = []
    for role, pairs in (("train", train), ("test", pool)):
        frames.append(
            pd.DataFrame(
                {
                    "role": role,
                    "position": np.arange(len(pairs), dtype=np.int64),
                    "id1": pairs[:, 0],
                    "id2": pairs[:, 1],
                    "label1": [pair.entity_labels1[i] for i in pairs[:, 0]],
                    "label2": [pair.entity_labels2[i] for i in pairs[:, 1]],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def read_split(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read ``split.tsv``; return ``train`` (k, 2) and the test ``pool`` (t, 2) in nested order."""
    table = read_tsv(path)
    missing = {"role", "position", "id1", "id2"} - set(table.columns)
    if missing:
        raise ValueError(f"{path}: split table lacks columns {sorted(missing)}")
    out = []
    for role in ("train", "test"):
        part = table[table["role"] == role].sort_values("position")
        out.append(part[["id1", "id2"]].to_numpy(dtype=np.int64).reshape(-1, 2))
    return out[0], out[1]


def summarize_ea_pair(key: str, spec: dict[str, Any], data_dir: str | None, out: str | os.PathLike) -> pd.DataFrame:
    """Load a pair and write its one-row summary table."""
    table = pd.DataFrame([load_ea_pair(key, spec, data_dir).summary()])
    write_tsv(table, out)
    return table


@dataclass(frozen=True)
class TrainingFiles:
    """The outputs of one training run: ``representations.pt``, ``split.tsv``, ``losses.tsv``, ``config.json``,
    ``timing.json``."""

    representations: str | os.PathLike
    split: str | os.PathLike
    losses: str | os.PathLike
    config: str | os.PathLike
    timing: str | os.PathLike


def train_ea_to_files(
    key: str,
    spec: dict[str, Any],
    data_dir: str | None,
    model_spec: dict[str, Any],
    num_train: int,
    seed: int,
    files: TrainingFiles,
    device: str | None = None,
) -> None:
    """Split the pair's alignment (seeded), train GCN-Align on ``num_train`` pairs, write the outputs atomically.

    :param key: the ``ea_datasets`` key
    :param spec: its config entry
    :param data_dir: local data folder or ``None``
    :param model_spec: the ``ea_models.gcn_align`` entry (:class:`GCNAlignConfig` fields)
    :param num_train: number of training alignments
    :param seed: split and training seed
    :param files: where to write
    :param device: where to train (``None``: CPU)
    """
    start = time.perf_counter()
    pair = load_ea_pair(key, spec, data_dir)
    load_seconds = time.perf_counter() - start
    train, pool = split_alignment(pair.alignment, num_train, seed)
    config = GCNAlignConfig.from_dict(model_spec)
    result = train_gcn_align(
        pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train, config, seed, device=device
    )
    with atomic_path(files.representations) as tmp:
        torch.save({"left": result.left.contiguous(), "right": result.right.contiguous()}, tmp)
    write_tsv(split_frame(pair, train, pool), files.split, sort_by=["role", "position"])
    write_tsv(pd.DataFrame({"epoch": range(1, len(result.losses) + 1), "loss": result.losses}), files.losses)
    write_json(
        {"model": "gcn_align", **result.config, "ea_dataset": key, "num_train": num_train, "seed": seed},
        files.config,
    )
    epochs = len(result.losses)
    write_json(
        {
            "load_seconds": load_seconds,
            "train_seconds": result.seconds,
            "epochs": epochs,
            "seconds_per_epoch": result.seconds / epochs if epochs else None,
            "torch_threads": torch.get_num_threads(),
            "device": str(device or "cpu"),
        },
        files.timing,
    )


def load_representations(path: str | os.PathLike) -> tuple[torch.Tensor, torch.Tensor]:
    """Read ``representations.pt``; return ``left`` (n1, d) and ``right`` (n2, d)."""
    data = torch.load(path, map_location="cpu", weights_only=True)
    return data["left"], data["right"]


def ea_ranks_to_file(
    key: str,
    spec: dict[str, Any],
    data_dir: str | None,
    representations_path: str | os.PathLike,
    split_path: str | os.PathLike,
    out: str | os.PathLike,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """Rank every pair of the test pool among the pool's candidates (both sides) and write the ranks table."""
    from kgeval.ea.evaluation import ea_ranks_frame, rank_alignment  # lazily: training jobs need not import it

    pair = load_ea_pair(key, spec, data_dir)
    left, right = load_representations(representations_path)
    _, pool = read_split(split_path)
    results = rank_alignment(left, right, pool, memory_budget_mb=memory_budget_mb)
    table = ea_ranks_frame(results, pool, pair.entity_labels1, pair.entity_labels2)
    write_parquet(table, out)
    return table
