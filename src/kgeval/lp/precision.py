"""Why two float32 rankers can disagree on a rank: near-ties within float32 rounding.

Two correct rankers that score in float32 (kgeval's engine and PyKEEN's evaluator, on a CPU or a GPU) compute each
score with other kernels, so the same score is rounded differently (another order of the additions, fused
multiply-adds, another matrix library). A rank then differs only where the true candidate and a rival are closer
than that rounding: the *explanation* this module makes testable. For one query let ``gap64`` be the smallest
distance in float64 (the reference) between the true candidate's score and any other candidate's, and ``err32``
the largest distance between a ranker's float32 scores of the query and the float64 ones, over both rankers and
all candidates. If the float32 orders of the true candidate and a rival differ from each other, then
``gap64 <= 2 * err32`` (each score moved by at most ``err32``): a disagreement outside that bound is a bug, not
rounding. :func:`near_tie_report` classifies every disagreeing query; :func:`disagreement_report` does it for the
queries where kgeval's engine and PyKEEN's evaluator disagree (``benchmarks/ranking.py``; on an NVIDIA H200, all 5
such queries of 1,000 test triples, both sides, DistMult and ComplEx, were near-ties). Written here because no
maintained library compares rankers' rounding; the scores are the models' own (:mod:`kgeval.lp.scoring`, PyKEEN in
float64).
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

#: the columns of one query's row in the triples: side -> (anchor, answer)
_COLUMNS = {"tail": (0, 2), "head": (2, 0)}

__all__ = ["disagreement_report", "float64_scores", "near_tie_report"]


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


def disagreement_report(
    model: Model,
    triples: torch.Tensor,
    differ: dict[str, np.ndarray],
    known: Sequence[torch.Tensor],
    device: torch.device | str = "cpu",
) -> pd.DataFrame:
    """The queries whose ranks differ between kgeval's engine and PyKEEN's evaluator, each against float64 scores.

    For each side and each flagged triple: the float64 reference (:func:`float64_scores`), both rankers' float32
    scores on ``device`` (kgeval's scorer, :func:`kgeval.lp.scoring.make_scorer`, and PyKEEN's ``score_t`` /
    ``score_h``), and :func:`near_tie_report` with the query's other known answers (the filter) as no rivals.

    :param triples: shape: (n, 3) the evaluated ID triples
    :param differ: per side (``head``/``tail``), shape: (n,) bool, the triples whose ranks differ
    :param known: the filter's triples (train, valid, test ...)
    :return: one row per flagged query: ``side``, ``triple`` (position in ``triples``), ``gap64``, ``err32``,
        ``near_tie``; empty where nothing is flagged
    """
    import torch

    from kgeval.lp.scoring import make_scorer

    every = torch.cat([t.cpu() for t in known]).numpy()
    frames = []
    for side, mask in differ.items():
        if side not in _COLUMNS:
            raise ValueError(f"side must be 'head' or 'tail', got {side!r}")
        index = np.flatnonzero(mask)
        if not len(index):
            continue
        sub = torch.as_tensor(triples)[index].cpu()
        a_col, answer_col = _COLUMNS[side]
        anchor, relation, answer = sub[:, a_col], sub[:, 1], sub[:, answer_col]
        with torch.no_grad():
            ours = make_scorer(model, device=device).score(side, anchor.to(device), relation.to(device))
            theirs = model.score_t(sub[:, :2].to(device)) if side == "tail" else model.score_h(sub[:, 1:].to(device))
        exclude = np.zeros((len(sub), int(ours.shape[1])), dtype=bool)
        for i, (a, r) in enumerate(zip(anchor.tolist(), relation.tolist())):
            exclude[i, every[(every[:, a_col] == a) & (every[:, 1] == r), answer_col]] = True
        report = near_tie_report(
            float64_scores(model, sub, side),
            [ours.float().cpu().numpy(), theirs.float().cpu().numpy()],
            answer.numpy(),
            exclude=exclude,
        )
        frames.append(report.assign(side=side, triple=index))
    columns = ["side", "triple", "gap64", "err32", "near_tie"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
