"""The embedded default EA pair: two seeded, overlapping views of one graph that PyKEEN bundles.

The sampler (:func:`sample_two_views`) works on one set of triples ``T`` (shape (m, 3)) over ``n`` entities:

1. ``rng = numpy.random.default_rng(seed)``.
2. View 1 keeps ``round(keep_fraction * m)`` triples drawn uniformly without replacement; view 2 independently
   draws its own ``round(keep_fraction * m)`` triples (same ``rng``, next draw).
3. Each view holds the entities that occur in its kept triples. View-1 entities are numbered ``0 .. n1-1`` in
   increasing original id; view-2 entities get **fresh** ids, a random permutation of ``0 .. n2-1`` (third draw of
   ``rng``), so that no id reveals the alignment. Relation ids are kept as they are in both views.
4. The alignment is every entity present in both views, as ``(view-1 id, view-2 id)`` sorted by the view-1 id.

Labels and names are the original entity labels in both views (so a name-based matcher is perfect on this pair;
it is meant for the structure-only GCN-Align). The result depends only on ``(triples, keep_fraction, seed)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kgeval.ea.pair import EADataError, EAPair

__all__ = ["TwoViews", "sample_two_views", "two_view_pair", "BUNDLED_GRAPHS"]

#: The graphs PyKEEN ships inside its package (no download), by config name.
BUNDLED_GRAPHS = ("nations", "kinships", "umls")


@dataclass(frozen=True)
class TwoViews:
    """The two views in the ids of :func:`sample_two_views`.

    :ivar triples1: shape (m1, 3), view-1 ids
    :ivar triples2: shape (m2, 3), view-2 ids
    :ivar entities1: shape (n1,), the original id of each view-1 entity
    :ivar entities2: shape (n2,), the original id of each view-2 entity
    :ivar alignment: shape (n, 2), ``(view-1 id, view-2 id)`` of the shared entities
    """

    triples1: np.ndarray
    triples2: np.ndarray
    entities1: np.ndarray
    entities2: np.ndarray
    alignment: np.ndarray


def sample_two_views(triples: np.ndarray, keep_fraction: float, seed: int) -> TwoViews:
    """Split one graph into two overlapping views (see module doc for the exact procedure).

    :param triples: shape (m, 3), int: ``(head, relation, tail)`` original ids
    :param keep_fraction: the share of the triples each view keeps, in (0, 1]
    :param seed: the random seed
    :returns: the two views and their alignment
    """
    if not 0.0 < keep_fraction <= 1.0:
        raise EADataError(f"two_view: keep_fraction must lie in (0, 1], got {keep_fraction}")
    triples = np.asarray(triples, dtype=np.int64)
    m = len(triples)
    k = int(round(keep_fraction * m))
    if k == 0:
        raise EADataError(f"two_view: keep_fraction={keep_fraction} keeps no triple of {m}")
    rng = np.random.default_rng(seed)
    kept1 = triples[np.sort(rng.choice(m, size=k, replace=False))]
    kept2 = triples[np.sort(rng.choice(m, size=k, replace=False))]

    entities1 = np.unique(kept1[:, [0, 2]])
    entities2 = np.unique(kept2[:, [0, 2]])
    fresh = rng.permutation(len(entities2))  # new id of the i-th (sorted) view-2 entity

    def to_view1(ids: np.ndarray) -> np.ndarray:
        return np.searchsorted(entities1, ids)

    def to_view2(ids: np.ndarray) -> np.ndarray:
        return fresh[np.searchsorted(entities2, ids)]

    triples1 = np.stack([to_view1(kept1[:, 0]), kept1[:, 1], to_view1(kept1[:, 2])], axis=1)
    triples2 = np.stack([to_view2(kept2[:, 0]), kept2[:, 1], to_view2(kept2[:, 2])], axis=1)
    entities2_by_new_id = np.empty_like(entities2)
    entities2_by_new_id[fresh] = entities2
    shared = np.intersect1d(entities1, entities2)
    alignment = np.stack([to_view1(shared), to_view2(shared)], axis=1).astype(np.int64)
    return TwoViews(
        triples1=triples1.astype(np.int64),
        triples2=triples2.astype(np.int64),
        entities1=entities1,
        entities2=entities2_by_new_id,
        alignment=alignment,
    )


def two_view_pair(name: str, dataset: str = "umls", keep_fraction: float = 0.7, seed: int = 0) -> EAPair:
    """Build the embedded EA pair from a PyKEEN-bundled graph (all of its train, valid and test triples).

    :param name: the pair's name
    :param dataset: one of :data:`BUNDLED_GRAPHS`
    :param keep_fraction: the share of triples each view keeps
    :param seed: the sampler's seed
    :returns: the pair; labels and names are PyKEEN's entity labels; relation labels PyKEEN's relation labels
    """
    key = dataset.lower()
    if key not in BUNDLED_GRAPHS:
        raise EADataError(f"two_view: dataset {dataset!r} is not one of the bundled graphs {list(BUNDLED_GRAPHS)}")
    from pykeen.datasets import get_dataset

    ds = get_dataset(dataset=key)
    triples = np.concatenate(
        [f.mapped_triples.numpy() for f in (ds.training, ds.validation, ds.testing) if f is not None], axis=0
    )
    views = sample_two_views(triples, keep_fraction=keep_fraction, seed=seed)
    id_to_label = {i: label for label, i in ds.training.entity_to_id.items()}
    rel_labels = [label for label, _ in sorted(ds.training.relation_to_id.items(), key=lambda kv: kv[1])]
    labels1 = [id_to_label[int(e)] for e in views.entities1]
    labels2 = [id_to_label[int(e)] for e in views.entities2]
    return EAPair(
        name=name,
        triples1=views.triples1,
        triples2=views.triples2,
        entity_labels1=labels1,
        entity_labels2=labels2,
        alignment=views.alignment,
        relation_labels1=rel_labels,
        relation_labels2=list(rel_labels),
        names1=list(labels1),
        names2=list(labels2),
    )
