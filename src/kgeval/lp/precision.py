"""Why two float32 rankers can disagree on a rank: near-ties within float32 rounding.

Two correct rankers that score in float32 (kgeval's engine and PyKEEN's evaluator, on a CPU or a GPU) compute each
score with other kernels, so the same score is rounded differently (another order of the additions, fused
multiply-adds, another matrix library). A rank then differs only where the true candidate and a rival are closer
than that rounding: the *explanation* this module makes testable. For one query let ``gap64`` be the smallest
distance in float64 (the reference) between the true candidate's score and any other candidate's, and ``err32``
the largest distance between a ranker's float32 scores of the query and the float64 ones, over both rankers and
all candidates. If the float32 orders of the true candidate and a rival differ from each other, then
``gap64 <= 2 * err32`` (each score moved by at most ``err32``): a disagreement outside that bound is a bug, not
rounding. :func:`near_tie_report` classifies every disagreeing query. Written here because no maintained library
compares rankers' rounding; the scores are the models' own (:mod:`kgeval.lp.scoring`, PyKEEN in float64).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import torch
    from pykeen.models import Model

__all__ = ["float64_scores", "near_tie_report"]


def float64_scores(model: Model, triples: torch.Tensor, side: str) -> np.ndarray:
    """Scores of every entity for the queries of ``triples`` in float64, on the CPU (the reference).

    :param model: a PyKEEN model (copied; the model itself is not changed)
    :param triples: shape: (q, 3) ID-based triples
    :param side: ``head`` (score every head of ``(?, r, t)``) or ``tail``
    :return: shape: (q, num_entities) float64
    """
    import torch

    reference = copy.deepcopy(model).to(device="cpu", dtype=torch.float64).eval()
    batch = torch.as_tensor(triples, dtype=torch.long).cpu()
    with torch.no_grad():
        if side == "tail":
            scores = reference.score_t(batch[:, :2])
        elif side == "head":
            scores = reference.score_h(batch[:, 1:])
        else:
            raise ValueError(f"side must be 'head' or 'tail', got {side!r}")
    return scores.double().numpy()


def near_tie_report(
    scores64: np.ndarray, scores32: Sequence[np.ndarray], true: np.ndarray, exclude: np.ndarray | None = None
) -> pd.DataFrame:
    """Per query: the float64 gap of its true candidate to the nearest rival, the float32 error, and whether the
    gap lies within rounding (module docstring).

    :param scores64: shape: (q, E) float64 reference scores
    :param scores32: each ranker's float32 scores of the same queries, shape (q, E) each
    :param true: shape: (q,) the true candidate of each query
    :param exclude: shape: (q, E) bool, candidates that are no rivals (filtered known answers), or None
    :return: columns ``gap64``, ``err32``, ``near_tie`` (``gap64 <= 2 * err32``), one row per query
    """
    scores64 = np.asarray(scores64, dtype=np.float64)
    q = scores64.shape[0]
    true = np.asarray(true, dtype=np.int64).reshape(q)
    rows = np.arange(q)
    distance = np.abs(scores64 - scores64[rows, true][:, None])
    if exclude is not None:
        distance[np.asarray(exclude, dtype=bool)] = np.inf
    distance[rows, true] = np.inf
    gap64 = distance.min(axis=1)
    err32 = np.zeros(q)
    for scores in scores32:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != scores64.shape:
            raise ValueError(f"float32 scores of shape {scores.shape}, expected {scores64.shape}")
        err32 = np.maximum(err32, np.abs(scores - scores64).max(axis=1))
    return pd.DataFrame({"gap64": gap64, "err32": err32, "near_tie": gap64 <= 2 * err32})
