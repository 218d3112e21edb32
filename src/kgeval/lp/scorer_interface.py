"""The scorer interface every score function of the ranking engine implements: :class:`Scorer` and its
:data:`RowBlocks`, and :func:`resolve_device`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod

import numpy as np
import torch

from kgeval.lp.engine.products import RowBlocks

__all__ = ["RowBlocks", "Scorer", "resolve_device"]

logger = logging.getLogger(__name__)


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device to train, load or score on: the GPU for ``None`` or ``"auto"`` when one is present, else the CPU; a
    CUDA device asked for where none is present falls back to the CPU, with a warning.

    :param device: a device, a device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"auto"``) or ``None``
    """
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        logger.warning("device %s requested but CUDA is not available; using cpu", resolved)
        return torch.device("cpu")
    return resolved


class Scorer(ABC):
    """Scores of all entities as the missing head or tail of a batch of queries.

    Queries use the dataset's relation IDs (no inverse relations); the scorer maps them as PyKEEN does.
    """

    #: a short human-readable name of the scoring method
    name: str
    #: whether scores come from one matrix product per batch (``False``: PyKEEN's generic broadcast)
    is_fast: bool
    #: number of candidate entities
    num_entities: int
    #: the device scores are computed on
    device: torch.device

    @abstractmethod
    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """Score every entity as the tail of ``(heads[i], relations[i], ?)``.

        :param heads: shape: (b,) long
        :param relations: shape: (b,) long
        :return: shape: (b, num_entities) float32, on :attr:`device`
        """

    @abstractmethod
    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:
        """Score every entity as the head of ``(?, relations[i], tails[i])``.

        :param relations: shape: (b,) long
        :param tails: shape: (b,) long
        :return: shape: (b, num_entities) float32, on :attr:`device`
        """

    def score(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """Score all entities for queries of one side (``"tail"``: anchors are heads; ``"head"``: anchors are tails).

        :param anchors: shape: (b,)
        :param relations: shape: (b,)
        :return: shape: (b, num_entities)
        """
        if side == "tail":
            return self.score_tails(anchors, relations)
        if side == "head":
            return self.score_heads(relations, anchors)
        raise ValueError(f"side must be 'head' or 'tail', got {side!r}")

    def score_array(self, side: str, anchors: np.ndarray, relations: np.ndarray) -> np.ndarray:
        """:meth:`score` of id arrays without gradients, as a float32 numpy array on the CPU; shape: (b, num_entities)."""
        with torch.no_grad():
            scores = self.score(
                side,
                torch.as_tensor(anchors, dtype=torch.long, device=self.device),
                torch.as_tensor(relations, dtype=torch.long, device=self.device),
            )
        return scores.float().cpu().numpy()

    def prepare(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:
        """Prepare a batch of queries whose score rows are then computed block by block of rows.

        ``prepare(side, a, r)(i, j)`` equals ``score(side, a, r)[i:j]``. The ranking engine calls the returned
        function from its worker threads, each with one torch thread, so that each block of rows is scored and
        reduced while it is in cache. Here every row is scored at once and the blocks are slices; the fast scorers
        do the per-query work (looking up, linearizing) once and one matrix product per block.

        :param anchors: shape: (b,)
        :param relations: shape: (b,)
        :return: a thread-safe function of a row range
        """
        scores = self.score(side, anchors, relations)
        return lambda start, stop: scores[start:stop]

    def bytes_per_query(self) -> int:
        """Peak bytes of temporaries per query row while scoring (besides the (b, num_entities) output)."""
        return 0

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(name={self.name!r}, is_fast={self.is_fast}, device={self.device})"
