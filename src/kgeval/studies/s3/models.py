"""The S3 entity-alignment methods, all ranked by the shared engine into the same EA ranks table.

Three families (paper 002 evaluates BootEA, MultiKE, RDGCN, RSN4EA and PARIS; see ``workflow/report/s3_study.rst``
for which are covered):

- ``gcn_align`` - a graph neural network: GCN-Align from :mod:`kgeval.ea.gcn_align`, trained on the training
  mappings with :func:`~kgeval.ea.gcn_align.train_gcn_align`; score = negative L1 distance (its training distance).
- ``transe_merge`` - translation-based: both graphs in one PyKEEN model (disjoint entity and relation ids, union of
  the triples) in which every *training* mapping ``(a, b)`` is merged into one entity, so that the seed alignment
  ties the two embedding spaces together (the parameter-sharing variant of MTransE / JAPE / BootEA's swapping).
  Trained by :func:`kgeval.lp.training.train_model` (PyKEEN's own training loop); score = negative L_p distance of the
  entity embeddings (p = the model's ``scoring_fct_norm``, default 1 as in PyKEEN's TransE).
- ``bootea`` - BootEA-style bootstrapping translation model (:mod:`kgeval.studies.s3.bootea`), structure only.
- ``rsn4ea`` - RSN4EA-style recurrent skipping network over biased random walks across both graphs joined by the
  seeds (:mod:`kgeval.studies.s3.rsn4ea`), structure only.
- ``rdgcn`` - RDGCN-style relation-aware highway GCN over entity-name vectors (:mod:`kgeval.studies.s3.rdgcn`).
- ``multike`` - MultiKE-style name, attribute and structure views (:mod:`kgeval.studies.s3.multike`); score = the
  weighted mean of the view cosine similarities over the views both entities have.
- ``name_similarity`` - training-free lexical baseline: score = the best normalized Levenshtein similarity of the
  two entities' preprocessed names (:mod:`kgeval.studies.s3.features`), 0 where a name is missing. It is the lexical core
  of a conventional matcher such as PARIS, without PARIS's iterative relation/class reasoning.

Candidates (:func:`rank_test_pairs`): ``test`` - every test pair's partner is ranked among the test-side entities
of the other graph (the protocol of :mod:`kgeval.ea.evaluation`, paper 000, OpenEA's code); ``all`` - among all
entities of the other graph (paper 002's text).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from kgeval.engine.l1 import L1Candidates
from kgeval.ea.evaluation import EA_SIDES, RANK_COLUMNS
from kgeval.ea.gcn_align import GCNAlignConfig, train_gcn_align
from kgeval.lp.ranking import RankResult, rank_from_score_fn
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.engine.memory import reuse_freed_memory
from kgeval.studies.s3.data import S3Pair
from kgeval.studies.s3.features import valid_names
from kgeval.studies.s3.scorer_interface import CandidateScorer, QueryScores

__all__ = [
    "MODELS",
    "METHOD_FAMILIES",
    "CANDIDATE_SETS",
    "CandidateScorer",
    "DistanceScorer",
    "NameScorer",
    "rank_test_pairs",
    "ranks_table",
    "merged_graph",
    "train_transe_merge",
    "train_gcn_align_model",
    "fit_scorer",
]

logger = logging.getLogger(__name__)

#: the S3 methods, by config key
MODELS: tuple[str, ...] = ("gcn_align", "transe_merge", "bootea", "rsn4ea", "rdgcn", "multike", "name_similarity")
#: which methods learn from names or attributes (the paper's MultiKE / RDGCN family) and which from structure only
#: (BootEA / RSN4EA); ``name_similarity`` is training-free
METHOD_FAMILIES: dict[str, str] = {
    "gcn_align": "structure",
    "transe_merge": "structure",
    "bootea": "structure",
    "rsn4ea": "structure",
    "rdgcn": "literal",
    "multike": "literal",
    "name_similarity": "training-free",
}
#: bound on the similarity rows a name scorer keeps (both sides of DBP15k fr-en against every entity: 2.4 GB)
NAME_ROWS_CACHE_BYTES = 4 << 30
#: candidate sets of the ranking protocol
CANDIDATE_SETS: tuple[str, ...] = ("test", "all")

class DistanceScorer(CandidateScorer):
    """Negative L_p distance between entity representations.

    :param left: shape (n1, d), graph-1 representations
    :param right: shape (n2, d), graph-2 representations
    :param p: the norm (1: L1, 2: Euclidean)
    """

    def __init__(self, left: torch.Tensor, right: torch.Tensor, p: float = 1.0) -> None:
        self.left = left.float()
        self.right = right.float()
        self.p = float(p)

    def for_candidates(self, side: str, candidate_ids: np.ndarray) -> QueryScores:  # noqa: D102
        queries, candidates = (self.left, self.right) if side == "left" else (self.right, self.left)
        cand = candidates[torch.as_tensor(np.asarray(candidate_ids, dtype=np.int64))]
        l1 = L1Candidates(cand) if self.p == 1.0 else None  # torch.cdist's bits, faster on the CPU

        def score(query_ids: np.ndarray) -> torch.Tensor:
            q = queries[torch.as_tensor(np.asarray(query_ids, dtype=np.int64))]
            if l1 is not None:
                return l1.distances(q).neg_()
            return torch.cdist(q, cand, p=self.p).neg_()

        return score


class NameScorer(CandidateScorer):
    """Best normalized Levenshtein similarity over the two entities' valid names (0 where one has none).

    A query entity's row against a candidate list is computed once and kept (up to ``cache_bytes`` in all): the
    settings of one ``evaluate_s3_model`` job rank mostly the same entities against the same candidates (every
    entity of the other graph), and each similarity is computed alone, so a kept row has the bits of a new one.

    :param names1: per graph-1 entity its raw names
    :param names2: per graph-2 entity its raw names
    :param cache_bytes: bound on the kept rows
    """

    def __init__(
        self, names1: list[tuple[str, ...]], names2: list[tuple[str, ...]], cache_bytes: int = NAME_ROWS_CACHE_BYTES
    ) -> None:
        self.names = {"left": [valid_names(n) for n in names1], "right": [valid_names(n) for n in names2]}
        self.cache_bytes = cache_bytes
        self._kept: dict[tuple[str, bytes], dict[int, np.ndarray]] = {}
        self._kept_bytes = 0
        self._lock = threading.Lock()

    def _flat(self, graph: str, ids: np.ndarray) -> tuple[list[str], np.ndarray]:
        """All valid names of the given entities and the position (in ``ids``) of each name's owner."""
        strings: list[str] = []
        owners: list[int] = []
        table = self.names[graph]
        for position, entity in enumerate(np.asarray(ids, dtype=np.int64).tolist()):
            for name in table[entity]:
                strings.append(name)
                owners.append(position)
        return strings, np.asarray(owners, dtype=np.int64)

    def _similarities(self, query_graph: str, query_ids: np.ndarray, candidates: tuple[list[str], np.ndarray, int]) -> np.ndarray:
        """(b, c) float32 similarities of the query entities to the candidates (their flat names, owners, count)."""
        c_strings, c_owner, num_cand = candidates
        q_strings, q_owner = self._flat(query_graph, query_ids)
        if not (q_strings and c_strings):
            return np.zeros((len(query_ids), num_cand), dtype=np.float32)
        sims = process.cdist(q_strings, c_strings, scorer=Levenshtein.normalized_similarity, dtype=np.float32, workers=1)
        # best over each entity's names: max over the rows of one query, then the columns of one candidate
        by_query = _max_by_owner(sims, q_owner, len(query_ids))
        return _max_by_owner(by_query.T, c_owner, num_cand).T.copy()

    def for_candidates(self, side: str, candidate_ids: np.ndarray) -> QueryScores:  # noqa: D102
        query_graph, cand_graph = ("left", "right") if side == "left" else ("right", "left")
        candidate_ids = np.asarray(candidate_ids, dtype=np.int64)
        candidates = (*self._flat(cand_graph, candidate_ids), len(candidate_ids))
        with self._lock:
            kept = self._kept.setdefault((side, hashlib.sha1(candidate_ids.tobytes()).digest()), {})

        def score(query_ids: np.ndarray) -> torch.Tensor:
            query_ids = np.asarray(query_ids, dtype=np.int64).tolist()
            with self._lock:
                rows = {q: kept[q] for q in query_ids if q in kept}
            missing = [q for q in dict.fromkeys(query_ids) if q not in rows]
            if missing:
                fresh = self._similarities(query_graph, np.asarray(missing, dtype=np.int64), candidates)
                rows.update(zip(missing, fresh))
                with self._lock:
                    if self._kept_bytes + fresh.nbytes <= self.cache_bytes:
                        kept.update(zip(missing, fresh))
                        self._kept_bytes += fresh.nbytes
            if not query_ids:
                return torch.zeros((0, candidates[2]), dtype=torch.float32)
            return torch.from_numpy(np.stack([rows[q] for q in query_ids]))

        return score


def _max_by_owner(values: np.ndarray, owners: np.ndarray, size: int) -> np.ndarray:
    """Row-wise maximum per owner: ``out[o] = max(values[owners == o])``, 0 for owners without rows.

    :param values: shape (r, c)
    :param owners: shape (r,), in ``0..size-1``
    :returns: shape (size, c)
    """
    out = np.zeros((size, values.shape[1]), dtype=np.float32)
    if len(np.unique(owners)) == len(owners):  # one name per entity (the usual case): a plain scatter
        out[owners] = values
    else:
        np.maximum.at(out, owners, values)
    return out


def rank_test_pairs(
    scorer: CandidateScorer,
    test_pairs: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    candidates: str = "all",
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    sides: Sequence[str] = EA_SIDES,
) -> dict[str, RankResult]:
    """Rank every test pair's true partner in both directions (or the given ones) with the shared engine.

    :param scorer: the method's scores
    :param test_pairs: shape (t, 2), ``(graph-1 id, graph-2 id)``
    :param num_entities1: n1 (used for ``candidates = all``)
    :param num_entities2: n2
    :param candidates: ``test`` (the test-side entities) or ``all`` (every entity of the other graph)
    :param memory_budget_mb: bound on one score block
    :param sides: the directions to rank (``left``: graph 1 -> graph 2, ``right``: the reverse)
    :returns: ``{side: RankResult}`` in the order of ``test_pairs``
    """
    if candidates not in CANDIDATE_SETS:
        raise ValueError(f"candidates must be one of {list(CANDIDATE_SETS)}, got {candidates!r}")
    unknown = set(sides) - set(EA_SIDES)
    if unknown or not sides:
        raise ValueError(f"sides must be a non-empty subset of {list(EA_SIDES)}, got {list(sides)}")
    pairs = np.asarray(test_pairs, dtype=np.int64).reshape(-1, 2)
    results = {}
    for side, q_col, c_col, n_other in (("left", 0, 1, num_entities2), ("right", 1, 0, num_entities1)):
        if side not in sides:
            continue
        queries = pairs[:, q_col]
        if candidates == "test":
            cand_ids = pairs[:, c_col]
            true = np.arange(len(pairs), dtype=np.int64)
        else:
            cand_ids = np.arange(n_other, dtype=np.int64)
            true = pairs[:, c_col]
        block = scorer.for_candidates(side, cand_ids)

        def score_fn(rows: torch.Tensor, block=block, queries=queries) -> torch.Tensor:
            return block(queries[rows.cpu().numpy()])

        results[side] = rank_from_score_fn(
            score_fn, true_candidates=true, num_candidates_total=len(cand_ids), memory_budget_mb=memory_budget_mb
        )
    return results


def ranks_table(results: dict[str, RankResult], test_pairs: np.ndarray, s3pair: S3Pair) -> pd.DataFrame:
    """The EA ranks table of :mod:`kgeval.ea.evaluation` (``source, target, side, rank_*, num_candidates, score``,
    sorted by side, source, target) with the pair's ids ``id1, id2`` in front; only the ranked sides appear.

    :param results: ``{side: RankResult}`` from :func:`rank_test_pairs`
    :param test_pairs: shape (t, 2), the ranked pairs in the order of the results
    """
    pair = s3pair.pair
    pairs = np.asarray(test_pairs, dtype=np.int64).reshape(-1, 2)
    lab1 = np.asarray(pair.entity_labels1, dtype=object)[pairs[:, 0]]
    lab2 = np.asarray(pair.entity_labels2, dtype=object)[pairs[:, 1]]
    frames = []
    for side in EA_SIDES:
        if side not in results:
            continue
        result = results[side]
        source, target = (lab1, lab2) if side == "left" else (lab2, lab1)
        frame = pd.DataFrame({"id1": pairs[:, 0], "id2": pairs[:, 1], "source": source, "target": target, "side": side})
        for column in RANK_COLUMNS:
            frame[column] = np.asarray(getattr(result, column))
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    return table.sort_values(["side", "source", "target"], kind="stable").reset_index(drop=True)


def merged_graph(s3pair: S3Pair, train_pairs: np.ndarray) -> tuple[np.ndarray, int, int, np.ndarray, np.ndarray]:
    """Both graphs in one id space, each training mapping merged into one entity.

    Graph-1 entity ``i`` gets id ``i``; graph-2 entities not in a training mapping get ``n1, n1+1, ...`` in id order;
    a graph-2 entity ``b`` of a training mapping ``(a, b)`` gets ``a``'s id. Relations stay disjoint (graph-2
    relation ``r`` becomes ``r1 + r``): no relation alignment is given.

    :returns: ``triples`` (m1 + m2, 3) in the merged ids, ``num_entities``, ``num_relations``, ``map1`` (n1,) and
        ``map2`` (n2,) from graph ids to merged ids
    """
    pair = s3pair.pair
    train = np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2)
    n1, n2 = pair.num_entities1, pair.num_entities2
    map1 = np.arange(n1, dtype=np.int64)
    merged = np.zeros(n2, dtype=bool)
    merged[train[:, 1]] = True
    map2 = np.empty(n2, dtype=np.int64)
    map2[~merged] = n1 + np.arange(int((~merged).sum()), dtype=np.int64)
    map2[train[:, 1]] = train[:, 0]
    num_entities = n1 + int((~merged).sum())
    r1 = pair.num_relations1
    t1 = pair.triples1
    t2 = pair.triples2
    triples = np.concatenate(
        [
            np.stack([map1[t1[:, 0]], t1[:, 1], map1[t1[:, 2]]], axis=1),
            np.stack([map2[t2[:, 0]], r1 + t2[:, 1], map2[t2[:, 2]]], axis=1),
        ]
    ).astype(np.int64)
    return triples, num_entities, r1 + pair.num_relations2, map1, map2


def _lp_data(name: str, triples: np.ndarray, num_entities: int, num_relations: int):
    """A :class:`kgeval.lp.datasets.LPData` whose training factory holds the merged graph (no valid/test triples)."""
    from pykeen.triples import TriplesFactory

    from kgeval.lp.datasets import LPData

    entity_to_id = {f"e{i}": i for i in range(num_entities)}
    relation_to_id = {f"r{i}": i for i in range(num_relations)}

    def factory(mapped: np.ndarray) -> TriplesFactory:
        return TriplesFactory(
            mapped_triples=torch.as_tensor(mapped, dtype=torch.long).reshape(-1, 3),
            entity_to_id=entity_to_id,
            relation_to_id=relation_to_id,
        )

    empty = np.zeros((0, 3), dtype=np.int64)
    return LPData(name, factory(triples), factory(empty), factory(empty))


def train_transe_merge(
    s3pair: S3Pair, train_pairs: np.ndarray, spec: Mapping[str, Any], seed: int, device: str | None = None
) -> tuple[DistanceScorer, dict[str, Any]]:
    """Train the merged-graph translation model (module doc) and return its scorer and training info.

    :param spec: a ``models``-style entry (``model: TransE``, ``model_kwargs``, ``optimizer_kwargs``,
        ``training_kwargs``, ...) passed to :func:`kgeval.lp.training.train_model`
    """
    from kgeval.lp.training import train_model

    triples, num_entities, num_relations, map1, map2 = merged_graph(s3pair, train_pairs)
    data = _lp_data(f"{s3pair.pair.name}_merged", triples, num_entities, num_relations)
    result = train_model(data, dict(spec), seed, device=device, log_every=max(1, _epochs(spec) // 10))
    with torch.no_grad():
        entities = result.model.entity_representations[0](indices=None).detach().cpu()
    if entities.is_complex():
        entities = torch.view_as_real(entities).flatten(start_dim=1)
    p = float((spec.get("model_kwargs") or {}).get("scoring_fct_norm", 1))
    scorer = DistanceScorer(entities[torch.as_tensor(map1)], entities[torch.as_tensor(map2)], p=p)
    info = {
        "train_seconds": result.seconds,
        "losses": result.losses,
        "num_merged_entities": num_entities,
        "num_triples": int(len(triples)),
        "distance_p": p,
    }
    return scorer, info


def _epochs(spec: Mapping[str, Any]) -> int:
    return int((spec.get("training_kwargs") or {}).get("num_epochs", 5))


def train_gcn_align_model(
    s3pair: S3Pair, train_pairs: np.ndarray, spec: Mapping[str, Any], seed: int, device: str | None = None
) -> tuple[DistanceScorer, dict[str, Any]]:
    """Train GCN-Align (:func:`kgeval.ea.gcn_align.train_gcn_align`) on the training mappings; L1 scorer."""
    pair = s3pair.pair
    config = GCNAlignConfig.from_dict(dict(spec))
    result = train_gcn_align(
        pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train_pairs, config, seed, device=device
    )
    info = {"train_seconds": result.seconds, "losses": result.losses, "distance_p": 1.0}
    return DistanceScorer(result.left, result.right, p=1.0), info


def fit_scorer(
    model: str,
    s3pair: S3Pair,
    train_pairs: np.ndarray,
    spec: Mapping[str, Any],
    seed: int,
    device: str | None = None,
    valid_pairs: np.ndarray | None = None,
    built: dict[str, CandidateScorer] | None = None,
) -> tuple[CandidateScorer, dict[str, Any]]:
    """Train (or, for the name baseline, just build) one method on the training mappings.

    :param model: one of :data:`MODELS`
    :param spec: the method's settings (``ea_models.gcn_align`` merged with ``studies.s3.gcn_align``; or
        ``studies.s3.transe_merge``; ignored for ``name_similarity``)
    :param valid_pairs: shape (v, 2), the validation mappings (BootEA's and RSN4EA's early stopping), or ``None``
    :param built: training-free scorers already built for this pair (``name_similarity``, with the rows it keeps),
        reused and added to; ``None`` builds anew
    :returns: the scorer and a JSON-serialisable info dict (``train_seconds``, ``losses``, ...)
    """
    # freed tensors kept for the next step: without it each large intermediate is a fresh mmap whose pages the
    # kernel zero-fills (a large share of BootEA's CPU time); only where memory lives changes
    with reuse_freed_memory():
        return _fit(model, s3pair, train_pairs, spec, seed, device, valid_pairs, built)


def _fit(
    model: str,
    s3pair: S3Pair,
    train_pairs: np.ndarray,
    spec: Mapping[str, Any],
    seed: int,
    device: str | None,
    valid_pairs: np.ndarray | None,
    built: dict[str, CandidateScorer] | None,
) -> tuple[CandidateScorer, dict[str, Any]]:
    """:func:`fit_scorer`'s body."""
    start = time.perf_counter()
    if model == "gcn_align":
        return train_gcn_align_model(s3pair, train_pairs, spec, seed, device)
    if model == "transe_merge":
        return train_transe_merge(s3pair, train_pairs, spec, seed, device)
    if model == "bootea":
        from kgeval.studies.s3.bootea import BootEAConfig, train_bootea

        pair = s3pair.pair
        result = train_bootea(
            pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train_pairs,
            BootEAConfig.from_dict(spec), seed, valid_pairs=valid_pairs,
        )
        info = {"train_seconds": result.seconds, "losses": result.losses, "num_labelled": result.num_labelled,
                "valid_hits": result.valid_hits}
        return DistanceScorer(result.left, result.right, p=2.0), info
    if model == "rsn4ea":
        from kgeval.studies.s3.rsn4ea import RSN4EAConfig, train_rsn4ea

        pair = s3pair.pair
        rsn = train_rsn4ea(
            pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train_pairs,
            RSN4EAConfig.from_dict(spec), seed, valid_pairs=valid_pairs,
        )
        info = {"train_seconds": rsn.seconds, "losses": rsn.losses, "valid_hits": rsn.valid_hits}
        return DistanceScorer(rsn.left, rsn.right, p=2.0), info
    if model in ("rdgcn", "multike"):
        from kgeval.studies.s3.name_vectors import name_vectors

        pair = s3pair.pair
        settings = dict(spec)
        vectors_spec = settings.pop("name_vectors", None)
        names = name_vectors(s3pair.names1, s3pair.names2, vectors_spec, seed=seed)
        if model == "rdgcn":
            from kgeval.studies.s3.rdgcn import RDGCNConfig, train_rdgcn

            result = train_rdgcn(
                names[0], names[1], pair.triples1, pair.triples2, train_pairs, RDGCNConfig.from_dict(settings), seed
            )
            info = {"train_seconds": result.seconds, "losses": result.losses, "name_dim": int(names[0].shape[1])}
            return DistanceScorer(result.left, result.right, p=1.0), info
        from kgeval.studies.s3.multike import MultiKEConfig, ViewScorer, aligned_attribute_vectors, train_multike

        config = MultiKEConfig.from_dict(settings)
        attrs = aligned_attribute_vectors(pair, train_pairs, config, seed=seed)
        views, info = train_multike(
            names, attrs, pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train_pairs, config, seed
        )
        return ViewScorer(views), info
    if model == "name_similarity":
        built = {} if built is None else built
        if model not in built:
            built[model] = NameScorer(s3pair.names1, s3pair.names2)
        return built[model], {"train_seconds": time.perf_counter() - start, "losses": []}
    raise ValueError(f"unknown S3 model {model!r}; use one of {list(MODELS)}")
