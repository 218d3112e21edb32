"""What :func:`kgeval.lp.ranking.rank_lp` ranks with: the scorer, the checked triples and the filter indices."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kgeval.lp.filtering import FilterIndex, as_triples_array
from kgeval.lp.scoring import Scorer, make_scorer, resolve_device

if TYPE_CHECKING:  # only a type hint here (PyKEEN's models are slow to import)
    from pykeen.models import Model

__all__ = ["LPSetup", "lp_setup"]


def as_triples_or_index(triples, name: str) -> FilterIndex | np.ndarray | None:
    """Known triples as one (m, 3) array (lists are concatenated), or the prebuilt index itself."""
    if triples is None or isinstance(triples, FilterIndex):
        return triples
    if isinstance(triples, (list, tuple)) and (not len(triples) or np.ndim(triples[0]) == 2):
        arrays = [as_triples_array(t, name=f"{name}[{i}]") for i, t in enumerate(triples)]
        return np.concatenate(arrays) if arrays else np.zeros((0, 3), dtype=np.int64)
    return as_triples_array(triples, name=name)


def as_filter_index(
    triples: FilterIndex | np.ndarray | None, num_entities: int, num_relations: int, name: str
) -> FilterIndex | None:
    if triples is None:
        return None
    if isinstance(triples, FilterIndex):
        if triples.num_entities != num_entities:
            raise ValueError(
                f"{name} is a FilterIndex over {triples.num_entities} entities, the model has {num_entities}"
            )
        return triples
    return FilterIndex(triples, num_entities=num_entities, num_relations=num_relations)


@dataclass(frozen=True)
class LPSetup:
    """What :func:`~kgeval.lp.ranking.rank_lp` ranks with: the scorer, the checked triples and the filter indices."""

    scorer: Scorer
    triples: np.ndarray
    num_relations: int
    index: FilterIndex | None
    topk_index: FilterIndex | None


def lp_setup(model: Model | Scorer, triples, filter_triples, topk_filter_triples, device, fast: bool) -> LPSetup:
    """The scorer (made from ``model`` unless it is one), the checked evaluation triples, and the filter indices
    (built from known triples on a second thread while the scorer is made); the arguments as :func:`rank_lp`'s."""
    array = as_triples_array(triples, name="triples")
    filter_arrays = as_triples_or_index(filter_triples, "filter_triples")
    topk_arrays = as_triples_or_index(topk_filter_triples, "topk_filter_triples")
    if isinstance(model, Scorer):
        inner = getattr(model, "model", None)
        num_entities = model.num_entities
        num_relations = getattr(model, "num_relations", None) or getattr(inner, "num_real_relations", None)
    else:
        num_entities, num_relations = model.num_entities, model.num_real_relations
    if num_relations is None:
        # a scorer without a model: the relations present in the evaluation and filter triples
        present = [array] + [a for a in (filter_arrays, topk_arrays) if isinstance(a, np.ndarray)]
        num_relations = max((int(a[:, 1].max()) + 1 for a in present if len(a)), default=1)
    if len(array) and (array[:, [0, 2]].max() >= num_entities or array[:, 1].max() >= num_relations):
        raise ValueError(
            f"triples use IDs outside the model's {num_entities} entities / {num_relations} relations; "
            "map them with the training factory's entity_to_id / relation_to_id"
        )

    def index(arrays, name: str) -> FilterIndex | None:
        return as_filter_index(arrays, num_entities, num_relations, name)

    # the filter indices (numpy sorts, which release the GIL) are built on a second thread while the scorer is made
    with ThreadPoolExecutor(1, thread_name_prefix="kgeval-filter") as pool:
        indices = pool.submit(
            lambda: (index(filter_arrays, "filter_triples"), index(topk_arrays, "topk_filter_triples"))
        )
        scorer = model if isinstance(model, Scorer) else make_scorer(model, fast=fast, device=resolve_device(device))
        filter_index, topk_index = indices.result()
    return LPSetup(scorer, array, num_relations, filter_index, topk_index if topk_index is not None else filter_index)
