"""The ranks step of the pipeline: per-triple ranks of a trained model for each evaluation split, and top-k lists.

The ranking itself is :func:`kgeval.lp.ranking.rank_lp` (the streamed, filtered engine); this module loads what it
needs, turns ids back into labels, and writes the tables of ``docs/design.md``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from kgeval.lp.datasets import LPData, load_dataset
from kgeval.io import write_json, write_parquet
from kgeval.lp.ranking import RankResult, rank_lp
from kgeval.lp.scorer_interface import resolve_device
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.tables import RANK_COLUMNS

__all__ = [
    "RANK_COLUMNS",
    "SIDES",
    "TrainedModel",
    "compute_ranks",
    "load_model",
    "rank_triples",
    "ranks_frame",
    "topk_frame",
]

#: link-prediction sides: which entity of the triple is predicted
SIDES: tuple[str, ...] = ("head", "tail")


def load_model(path: str, device: str | torch.device = "cpu") -> torch.nn.Module:
    """Load a model written by the training step, in evaluation mode; on the CPU, with a warning, where ``cuda`` is
    asked for and no GPU is visible (:func:`kgeval.lp.scorer_interface.resolve_device`, as training does)."""
    model = torch.load(path, map_location=resolve_device(str(device)), weights_only=False)
    model.eval()
    return model


def _labels(mapping: dict[str, int]) -> np.ndarray:
    labels = np.empty(len(mapping), dtype=object)
    for label, index in mapping.items():
        labels[index] = label
    return labels


def ranks_frame(data: LPData, triples: torch.Tensor, results: dict[str, RankResult]) -> pd.DataFrame:
    """One row per (triple, side) with labels and every rank column.

    :param data: the dataset (for the labels)
    :param triples: shape: (n, 3), the id triples that were ranked
    :param results: the engine's output per side
    """
    entities = _labels(data.training.entity_to_id)
    relations = _labels(data.training.relation_to_id)
    ids = triples.cpu().numpy()
    frames = []
    for side in SIDES:
        if side not in results:
            continue
        res = results[side]
        frame = pd.DataFrame(
            {
                "head": entities[ids[:, 0]],
                "relation": relations[ids[:, 1]],
                "tail": entities[ids[:, 2]],
                "side": side,
                "rank_optimistic": np.asarray(res.rank_optimistic, dtype=np.int64),
                "rank_realistic": np.asarray(res.rank_realistic, dtype=np.float64),
                "rank_pessimistic": np.asarray(res.rank_pessimistic, dtype=np.int64),
                "rank_nondeterministic": np.asarray(res.rank_nondeterministic, dtype=np.int64),
                "num_candidates": np.asarray(res.num_candidates, dtype=np.int64),
                "score": np.asarray(res.score, dtype=np.float64),
            }
        )
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    for column in ("head", "relation", "tail", "side"):
        out[column] = out[column].astype(str)
    return out


def topk_frame(data: LPData, triples: torch.Tensor, results: dict[str, RankResult]) -> pd.DataFrame:
    """One row per (unique query, position): ``side, relation, anchor, position, candidate, score``."""
    entities = _labels(data.training.entity_to_id)
    relations = _labels(data.training.relation_to_id)
    ids = triples.cpu().numpy()
    frames = []
    for side in SIDES:
        res = results.get(side)
        if res is None or res.topk_ids is None:
            continue
        anchor_col = 2 if side == "head" else 0
        keys = np.stack([ids[:, anchor_col], ids[:, 1]], axis=1)
        _, first = np.unique(keys, axis=0, return_index=True)
        first = np.sort(first)
        k = res.topk_ids.shape[1]
        cand = res.topk_ids[first]
        scores = res.topk_scores[first]
        valid = cand >= 0
        rows = np.repeat(first, k).reshape(-1, k)
        frames.append(
            pd.DataFrame(
                {
                    "side": side,
                    "relation": relations[ids[rows[valid], 1]],
                    "anchor": entities[ids[rows[valid], anchor_col]],
                    "position": np.tile(np.arange(1, k + 1), (len(first), 1))[valid],
                    "candidate": entities[cand[valid]],
                    "score": scores[valid].astype(np.float64),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    for column in ("side", "relation", "anchor", "candidate"):
        out[column] = out[column].astype(str)
    return out.sort_values(["side", "relation", "anchor", "position"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class TrainedModel:
    """A model written by the training step and the dataset it was trained on.

    :ivar model_path: the pickled model
    :ivar dataset_key: the dataset's config key
    :ivar dataset_spec: its config entry
    :ivar data_dir: where datasets live (``None``: PyKEEN's default)
    :ivar device: where to load the model and rank
    """

    model_path: str
    dataset_key: str
    dataset_spec: Mapping[str, Any]
    data_dir: str | None
    device: str = "cpu"

    def load(self) -> tuple[LPData, torch.nn.Module]:
        """The dataset, then the model in evaluation mode."""
        data = load_dataset(self.dataset_key, dict(self.dataset_spec), self.data_dir)
        return data, load_model(str(self.model_path), self.device)


def rank_triples(
    data: LPData,
    model: torch.nn.Module,
    triples: torch.Tensor,
    out: str,
    *,
    filter_triples,
    topk_filter_triples=None,
    top_k: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str = "cpu",
) -> tuple[pd.DataFrame, dict[str, RankResult], float]:
    """Filtered ranks of ``triples`` (:func:`kgeval.lp.ranking.rank_lp`), written as a ranks table to ``out``.

    :return: the ranks table, the engine's results per side and the seconds the ranking took
    """
    start = time.perf_counter()
    with torch.no_grad():
        results = rank_lp(
            model,
            triples,
            filter_triples=filter_triples,
            topk_filter_triples=topk_filter_triples,
            top_k=top_k,
            memory_budget_mb=memory_budget_mb,
            device=device,
        )
    seconds = time.perf_counter() - start
    table = ranks_frame(data, triples, results)
    write_parquet(table, out)
    return table, results, seconds


def compute_ranks(
    trained: TrainedModel,
    splits: Sequence[str],
    ranks_paths: Sequence[str],
    topk_path: str,
    timing_path: str,
    top_k: int = 10,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> dict[str, pd.DataFrame]:
    """Rank every triple of each split (filtered by train+valid+test) and write the tables.

    The test split additionally yields ``topk_path``: each test query's ``top_k`` best candidates after removing the
    train and valid answers (test answers stay in, so that pooling can find them).

    :returns: the ranks table per split
    """
    data, model = trained.load()
    filter_triples = data.all_mapped_triples()
    topk_filter = [data.training.mapped_triples, data.validation.mapped_triples]
    tables: dict[str, pd.DataFrame] = {}
    timing: dict[str, float] = {}
    for split, path in zip(splits, ranks_paths, strict=True):
        triples = data.factory(split).mapped_triples
        tables[split], results, timing[f"{split}_seconds"] = rank_triples(
            data,
            model,
            triples,
            path,
            filter_triples=filter_triples,
            topk_filter_triples=topk_filter if split == "test" else None,
            top_k=top_k if split == "test" else 0,
            memory_budget_mb=memory_budget_mb,
            device=trained.device,
        )
        if split == "test":
            write_parquet(topk_frame(data, triples, results), topk_path)
    write_json(timing, timing_path)
    return tables
