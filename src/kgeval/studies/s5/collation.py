"""Stacking S5's per-model tables (one folder per dataset, model and seed) into one table each."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from kgeval.io import read_tsv, write_tsv

__all__ = ["collate_s5"]


def _path_keys(path: str) -> dict[str, str]:
    """``dataset, model, seed`` from ``.../{dataset}/{model}/{seed}/<file>``."""
    parts = os.path.normpath(path).split(os.sep)
    return {"dataset": parts[-4], "model": parts[-3], "seed": parts[-2]}


def collate_s5(
    assessment_paths: Sequence[str],
    summary_paths: Sequence[str],
    calibrator_paths: Sequence[str],
    model_names: dict[str, str],
    assessment_out: str | os.PathLike,
    summary_out: str | os.PathLike,
    calibrators_out: str | os.PathLike,
) -> None:
    """Stack the per-model tables into three tables with ``dataset, model, model_class, seed`` columns.

    :param model_names: config model key -> PyKEEN class name (e.g. ``transe`` -> ``TransE``)
    """
    for paths, out in (
        (assessment_paths, assessment_out),
        (summary_paths, summary_out),
        (calibrator_paths, calibrators_out),
    ):
        frames = []
        for path in paths:
            keys = _path_keys(str(path))
            frame = read_tsv(path)
            frame.insert(0, "seed", int(keys["seed"]))
            frame.insert(0, "model_class", model_names.get(keys["model"], keys["model"]))
            frame.insert(0, "model", keys["model"])
            frame.insert(0, "dataset", keys["dataset"])
            frames.append(frame)
        if not frames:
            raise ValueError(f"nothing to collate into {out}: no S5 models configured (check studies.s5.models)")
        table = pd.concat(frames, ignore_index=True)
        sort = [c for c in ("dataset", "model", "seed", "calibrator", "strategy", "metric") if c in table.columns]
        write_tsv(table, out, sort_by=sort)
