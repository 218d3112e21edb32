"""Reference scorers that expose how rank definitions treat ties (paper 000, Sec. 2.1 and 3.1), and entity relabeling.

Both reference scorers implement the :class:`~kgeval.lp.scoring.Scorer` interface, so the ranking engine
(:mod:`kgeval.lp.ranking`) ranks them exactly as it ranks a trained model:

* :class:`ConstantScorer` gives every candidate the same score: the degenerate model of paper 000, Sec. 3.1. Every
  candidate ties with the true one, so the optimistic rank is 1, the pessimistic rank is the number of candidates
  ``|S|``, the realistic rank is ``(|S| + 1) / 2`` and the non-deterministic rank is the true entity's position among
  the candidates in entity-ID order.
* :class:`RandomScorer` scores the candidates of each query by a uniformly random permutation of ``0..E-1``: a random
  strict order without a single tie, so all four rank types coincide and each rank is uniform on ``1..|S|`` (the
  "random model" of the paper, whose expected rank is ``(|S| + 1) / 2``). The permutation depends only on the seed and
  the query (side, anchor, relation), never on how queries are batched.

:class:`PermutedScorer` relabels the entities of any scorer by a permutation: the same model, with the entity IDs
(and hence the candidate order that breaks ties in the non-deterministic rank) shuffled.
"""

from __future__ import annotations

import numpy as np
import torch

from kgeval.lp.scoring import Scorer, resolve_device

__all__ = [
    "ConstantScorer",
    "RandomScorer",
    "PermutedScorer",
    "random_permutation",
    "permute_triples",
]

#: seed-sequence code of each side, so the head and tail queries of the same (anchor, relation) get different orders
_SIDE_CODES = {"head": 0, "tail": 1}


class ConstantScorer(Scorer):
    """Every candidate of every query gets the same score (a model that cannot tell anything apart)."""

    is_fast = True

    def __init__(self, num_entities: int, value: float = 0.0, device: str | torch.device | None = "cpu") -> None:
        """
        :param num_entities: number of candidate entities E
        :param value: the score of every candidate (any value gives the same ranks)
        :param device: where the scores are created
        """
        if num_entities < 1:
            raise ValueError(f"num_entities must be positive, got {num_entities}")
        self.num_entities = int(num_entities)
        self.value = float(value)
        self.device = resolve_device(device)
        self.name = "constant"

    def _scores(self, batch_size: int) -> torch.Tensor:
        return torch.full((batch_size, self.num_entities), self.value, dtype=torch.float32, device=self.device)

    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self._scores(len(heads))

    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self._scores(len(tails))


class RandomScorer(Scorer):
    """Scores of each query: a uniformly random permutation of ``0..E-1`` (no ties), seeded by the query itself.

    Query ``(side, anchor, relation)`` uses :func:`numpy.random.default_rng` seeded with the entropy
    ``[seed, side, anchor, relation]`` (NumPy's :class:`~numpy.random.SeedSequence` mixes them), so its scores are the
    same whichever batch it arrives in and differ between queries and seeds.
    """

    is_fast = False

    def __init__(self, num_entities: int, seed: int = 0, device: str | torch.device | None = "cpu") -> None:
        """
        :param num_entities: number of candidate entities E (scores are exact in float32 up to 2**24 entities)
        :param seed: non-negative seed
        :param device: where the scores are returned
        """
        if num_entities < 1:
            raise ValueError(f"num_entities must be positive, got {num_entities}")
        if num_entities > 2**24:
            raise ValueError(f"num_entities={num_entities} exceeds 2**24: float32 scores would tie")
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self.num_entities = int(num_entities)
        self.seed = int(seed)
        self.device = resolve_device(device)
        self.name = f"random(seed={self.seed})"

    def _scores(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        anchors_np = anchors.detach().cpu().numpy().astype(np.int64)
        relations_np = relations.detach().cpu().numpy().astype(np.int64)
        out = np.empty((len(anchors_np), self.num_entities), dtype=np.float32)
        code = _SIDE_CODES[side]
        for i, (anchor, relation) in enumerate(zip(anchors_np, relations_np, strict=True)):
            rng = np.random.default_rng([self.seed, code, int(anchor), int(relation)])
            out[i] = rng.permutation(self.num_entities)
        return torch.from_numpy(out).to(self.device)

    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self._scores("tail", heads, relations)

    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self._scores("head", tails, relations)


class PermutedScorer(Scorer):
    """A scorer whose entities are relabeled: new ID ``permutation[e]`` stands for the base scorer's entity ``e``.

    Queries arrive in new IDs and score columns are returned in new-ID order, so for every (anchor, relation, candidate)
    the score is the base scorer's score of the same entities. Rank with triples and filter triples mapped by
    :func:`permute_triples`; optimistic, pessimistic and realistic ranks then do not change, while the non-deterministic
    rank breaks ties by the new IDs.
    """

    def __init__(self, base: Scorer, permutation: np.ndarray) -> None:
        """
        :param base: the scorer to relabel
        :param permutation: shape: (E,) a permutation of ``0..E-1``; entity ``e`` gets the new ID ``permutation[e]``
        """
        permutation = np.asarray(permutation)
        if permutation.shape != (base.num_entities,) or not np.array_equal(
            np.sort(permutation), np.arange(base.num_entities)
        ):
            raise ValueError(f"permutation must be a permutation of 0..{base.num_entities - 1}")
        self.base = base
        self.num_entities = base.num_entities
        self.device = base.device
        self.is_fast = base.is_fast
        self.name = f"permuted({base.name})"
        # PyKEEN's relation count, where the base scorer has a model (kgeval.lp.ranking.rank_lp reads it)
        self.model = getattr(base, "model", None)
        # inverse[new] = old: which base entity a new ID stands for
        self.inverse = torch.from_numpy(np.argsort(permutation).astype(np.int64))

    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:  # noqa: D102
        old_heads = self.inverse[heads.cpu()]
        return self.base.score_tails(old_heads, relations).index_select(1, self.inverse.to(self.device))

    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:  # noqa: D102
        old_tails = self.inverse[tails.cpu()]
        return self.base.score_heads(relations, old_tails).index_select(1, self.inverse.to(self.device))

    def bytes_per_query(self) -> int:
        """The base scorer's temporaries plus the permuted copy of a score row."""
        return self.base.bytes_per_query() + 4 * self.num_entities


def random_permutation(num_entities: int, seed: int) -> np.ndarray:
    """A uniformly random permutation of the entity IDs.

    :return: shape: (num_entities,) int64; entity ``e`` gets the new ID ``result[e]``
    """
    return np.random.default_rng(seed).permutation(num_entities).astype(np.int64)


def permute_triples(triples: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """Map the head and tail IDs of triples through a permutation (relations stay).

    :param triples: shape: (m, 3) int
    :param permutation: shape: (E,)
    :return: shape: (m, 3) int64, a new array
    """
    out = np.array(triples, dtype=np.int64, copy=True)
    if out.size:
        out[:, 0] = permutation[out[:, 0]]
        out[:, 2] = permutation[out[:, 2]]
    return out
