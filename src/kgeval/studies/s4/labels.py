"""Label sets for the label-sparsity study (S4): sparse labels, labels completed by TREC-style pooling, one interface.

A :class:`LabelSet` holds one row per *universe* triple: every triple that is a positive in at least one label
level. Its columns say in which levels the triple is a labelled answer:

- ``depth``: 0 when the triple is in the sparse labels, ``d`` (1..10) when it entered the judged pool at pooling
  depth ``d`` and was judged positive, missing (NaN) when no level up to the deepest pool labels it;
- ``original``: the triple is in the dataset's original test set (FB-Test-O for the release);
- ``known``: the triple is a known positive that every level filters in micro ranking although it is not evaluated
  (FB-Test-O for the release: the paper filters by train+valid+test throughout; never set by the simulator).

The levels (:meth:`LabelSet.levels`) are ``original`` (every original test triple), ``sparse`` (``depth == 0``)
and ``depth1`` .. ``depthD`` (``depth <= d``). For a level, :meth:`LabelSet.level_masks` gives the evaluated
triples (the answers of micro metrics, the relevant documents of macro metrics) and the filtered triples (removed
from the candidates of micro ranks besides train+valid).

Two sources build a label set:

- :func:`load_released_labels` reads the S4 release (FB-Test-S, FB-Test-S-C with Y/N annotations and pooling depths
  of every judged triple, for FB15k-237) from a local folder or, given none, downloads it from the release's public
  repository at a pinned commit into a cache (``pystow``).
- :func:`kgeval.studies.s4.simulation.simulate_labels` *simulates* pooling on any dataset: a seeded share of the test triples is hidden; the top-k
  candidates of a set of systems for the questions of the visible triples are pooled at depths 1..D; an oracle (the
  dataset's own triples) judges every pooled candidate, so a hidden test triple pooled at depth ``d`` comes back as a
  positive at ``depth = d``. It is a simulation: the oracle knows only the dataset's triples, not the world, so
  unlabelled true facts outside the dataset stay invisible, unlike the human judges of the release.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_json, write_tsv

__all__ = [
    "TRIPLE_COLUMNS",
    "RELEASE_URL",
    "RELEASE_FILES",
    "LabelSet",
    "level_depth",
    "unique_triples",
    "triple_index",
    "load_released_labels",
    "fetch_release",
    "read_triples_file",
    "write_label_set",
    "read_label_set",
]

logger = logging.getLogger(__name__)

TRIPLE_COLUMNS: list[str] = ["head", "relation", "tail"]

#: raw-file root of the S4 release at the commit the offline copy was taken from
RELEASE_URL = "https://raw.githubusercontent.com/zhouying20/kgc-sparsity/513479a4b30db70b37c705c488762e8d3b95a720/data"

#: files of the release that the loader and the category check read, relative to the release's ``data`` folder
RELEASE_FILES: tuple[str, ...] = (
    "FB-Test-S/samples.txt",
    "FB-Test-S/sample_idxs.txt",
    "FB-Test-S-C/annotations.txt",
    "FB-Test-S-C/test.txt",
    "FB-Test-S-C/supplementary/pooling_depth.txt",
    "FB-Test-O/type_information/one_to_one.txt",
    "FB-Test-O/type_information/one_to_many.txt",
    "FB-Test-O/type_information/many_to_one.txt",
    "FB-Test-O/type_information/many_to_many.txt",
)


@dataclass(frozen=True)
class LabelSet:
    """Positives of every label level over one universe of triples.

    :param triples: shape: (n, 6), one row per unique universe triple: ``head, relation, tail`` (labels),
        ``depth`` (float; 0 = sparse label, d = pooled at depth d, NaN = never labelled), ``original`` (bool),
        ``known`` (bool); sorted by head, relation, tail
    :param judgments: shape: (m, 5), every judged pooled triple: ``head, relation, tail, label`` (``Y``/``N``),
        ``depth`` (int, the smallest depth at which it entered the pool); empty when unknown
    :param max_depth: the deepest pooling level
    :param meta: provenance and counts (source, seed, numbers dropped ...), written next to the tables
    """

    triples: pd.DataFrame
    judgments: pd.DataFrame
    max_depth: int
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = set(TRIPLE_COLUMNS + ["depth", "original", "known"]) - set(self.triples.columns)
        if missing:
            raise ValueError(f"LabelSet.triples lacks the column(s) {sorted(missing)}")
        if self.triples.duplicated(TRIPLE_COLUMNS).any():
            raise ValueError("LabelSet.triples holds a triple twice; universe triples must be unique")
        if self.max_depth < 1:
            raise ValueError(f"LabelSet.max_depth must be >= 1, got {self.max_depth}")

    def levels(self) -> list[str]:
        """Level names: ``original``, ``sparse``, ``depth1`` .. ``depth{max_depth}``."""
        return ["original", "sparse"] + [f"depth{d}" for d in range(1, self.max_depth + 1)]

    def level_masks(self, level: str) -> tuple[np.ndarray, np.ndarray]:
        """Evaluated and filtered triples of one level.

        :param level: one of :meth:`levels`
        :return: two boolean arrays, shape: (n,), over :attr:`triples`: ``evaluated`` (labelled answers) and
            ``filtered`` (removed from micro-ranking candidates: ``known`` or evaluated)
        """
        known = self.triples["known"].to_numpy(dtype=bool)
        if level == "original":
            evaluated = self.triples["original"].to_numpy(dtype=bool)
        else:
            depth = level_depth(level)
            if depth > self.max_depth:
                raise ValueError(f"level {level!r} is deeper than the label set's max_depth {self.max_depth}")
            values = self.triples["depth"].to_numpy(dtype=float)
            evaluated = np.nan_to_num(values, nan=np.inf) <= depth
        return evaluated, evaluated | known

    def summary(self) -> pd.DataFrame:
        """Per level: ``level, depth, num_answers, num_added`` (answers beyond the sparse labels), ``num_judged``.

        ``depth`` is -1 for ``original``, 0 for ``sparse``; ``num_judged`` counts pooled triples judged up to it.
        """
        rows = []
        sparse = int((self.triples["depth"] == 0).sum())
        for level in self.levels():
            evaluated, _ = self.level_masks(level)
            depth = -1 if level == "original" else level_depth(level)
            judged = int((self.judgments["depth"] <= depth).sum()) if depth > 0 and len(self.judgments) else 0
            rows.append(
                {
                    "level": level,
                    "depth": depth,
                    "num_answers": int(evaluated.sum()),
                    "num_added": int(evaluated.sum()) - sparse if depth >= 0 else 0,
                    "num_judged": judged,
                }
            )
        return pd.DataFrame(rows)


def level_depth(level: str) -> int:
    """Pooling depth of a level name: 0 for ``sparse``, ``d`` for ``depth{d}``.

    :raises ValueError: for ``original`` or an unknown name
    """
    if level == "sparse":
        return 0
    if level.startswith("depth") and level[5:].isdigit():
        return int(level[5:])
    raise ValueError(f"unknown label level {level!r}; expected 'original', 'sparse' or 'depth<d>'")


def unique_triples(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """The distinct ``head, relation, tail`` labels of ``frame``, as strings, sorted; ``what`` names it in errors."""
    missing = set(TRIPLE_COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"{what}: missing column(s) {sorted(missing)}; need head, relation, tail")
    out = frame[TRIPLE_COLUMNS].astype(str).drop_duplicates()
    return out.sort_values(TRIPLE_COLUMNS, kind="stable").reset_index(drop=True)


def triple_index(frame: pd.DataFrame) -> pd.MultiIndex:
    """The ``head, relation, tail`` labels of ``frame`` as a MultiIndex of strings (for membership tests)."""
    return pd.MultiIndex.from_frame(frame[TRIPLE_COLUMNS].astype(str))


def read_triples_file(path: str | os.PathLike, *, with_label: bool = False, with_depth: bool = False) -> pd.DataFrame:
    """Read a tab-separated triple file of the release: ``head, relation, tail`` [, ``label`` Y/N] [, ``depth``].

    Surrounding blanks in a field are dropped (the release has a few, e.g. ``" N"``).

    :raises ValueError: naming file and line when a line has the wrong number of fields or a bad label/depth
    """
    path = Path(path)
    columns = TRIPLE_COLUMNS + (["label"] if with_label else []) + (["depth"] if with_depth else [])
    rows = []
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = [part.strip() for part in line.split("\t")]
        if len(fields) != len(columns):
            raise ValueError(
                f"{path}:{line_no}: expected {len(columns)} tab-separated fields {columns}, got {len(fields)}"
            )
        if with_label and fields[3] not in ("Y", "N"):
            raise ValueError(f"{path}:{line_no}: label must be Y or N, got {fields[3]!r}")
        if with_depth and not fields[-1].isdigit():
            raise ValueError(f"{path}:{line_no}: pooling depth must be a positive integer, got {fields[-1]!r}")
        rows.append(fields)
    frame = pd.DataFrame(rows, columns=columns)
    if with_depth:
        frame["depth"] = frame["depth"].astype(np.int64)
    return frame


def fetch_release(
    cache_dir: str | os.PathLike | None = None, url: str = RELEASE_URL, files: Sequence[str] = RELEASE_FILES
) -> Path:
    """Download the release files (:data:`RELEASE_FILES`) once and return the local ``data`` folder.

    Uses ``pystow`` (a PyKEEN dependency): files already in the cache are not fetched again.

    :param cache_dir: the cache root; default ``pystow``'s (``~/.data/kgeval``, or ``$PYSTOW_HOME/kgeval``)
    :param url: the release's raw-file root (pinned commit by default)
    :param files: the files to fetch, relative to the release's ``data`` folder
    :return: the folder holding ``FB-Test-S``, ``FB-Test-S-C`` and ``FB-Test-O``
    """
    import pystow

    module = pystow.Module(base=Path(cache_dir)) if cache_dir is not None else pystow.module("kgeval")
    root = None
    for relative in files:
        parts = relative.split("/")
        target = module.ensure("kgc-sparsity", *parts[:-1], url=f"{url}/{relative}", name=parts[-1])
        root = target.parents[len(parts) - 1]
    assert root is not None
    return root


def _check_release_folder(root: Path) -> None:
    """Raise naming the first label file of the release missing under ``root``."""
    for relative in RELEASE_FILES[:5]:
        if not (root / relative).is_file():
            raise FileNotFoundError(
                f"S4 release: {root / relative} is missing; point studies.s4.released at the release's data folder "
                f"(FB-Test-S, FB-Test-S-C, FB-Test-O) or set it to null to download {RELEASE_URL}"
            )


def _drop_unknown(
    samples: pd.DataFrame,
    annotations: pd.DataFrame,
    entities: set[str] | None,
    relations: set[str] | None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """The sampled and annotated triples without entities or relations unknown to the models, and the counts dropped."""
    dropped = {}
    if entities is not None or relations is not None:

        def keep(frame: pd.DataFrame) -> np.ndarray:
            ok = np.ones(len(frame), dtype=bool)
            if entities is not None:
                ok &= frame["head"].isin(entities).to_numpy() & frame["tail"].isin(entities).to_numpy()
            if relations is not None:
                ok &= frame["relation"].isin(relations).to_numpy()
            return ok

        for name in ("samples", "annotations"):
            frame = samples if name == "samples" else annotations
            ok = keep(frame)
            dropped[name] = int((~ok).sum())
            if name == "samples":
                samples = frame.loc[ok].reset_index(drop=True)
            else:
                annotations = frame.loc[ok].reset_index(drop=True)
    return samples, annotations, dropped


def _added_positives(
    root: Path, samples: pd.DataFrame, annotations: pd.DataFrame, depths: pd.DataFrame, test_index: pd.MultiIndex
) -> pd.DataFrame:
    """The FB-Test-S-C positives beyond FB-Test-S, with their pooling depth; raises where the release contradicts the
    test set."""
    absent = ~triple_index(samples).isin(test_index)
    if absent.any():
        first = samples.loc[absent].iloc[0]
        raise ValueError(
            f"{root / 'FB-Test-S/samples.txt'}: {int(absent.sum())} sampled triple(s) are not in the test set, e.g. "
            f"({first['head']}, {first['relation']}, {first['tail']}); is the dataset FB15k-237?"
        )
    positives = annotations.loc[annotations["label"] == "Y", TRIPLE_COLUMNS].drop_duplicates()
    sample_index = triple_index(samples)
    not_positive = ~sample_index.isin(triple_index(positives))
    if not_positive.any():
        raise ValueError(
            f"{root / 'FB-Test-S-C/annotations.txt'}: {int(not_positive.sum())} sampled triple(s) not annotated Y"
        )
    added = positives.loc[~triple_index(positives).isin(sample_index)].merge(depths, on=TRIPLE_COLUMNS, how="left")
    if added["depth"].isna().any():
        first = added.loc[added["depth"].isna()].iloc[0]
        raise ValueError(
            f"{root / 'FB-Test-S-C/supplementary/pooling_depth.txt'}: no depth for the positive "
            f"({first['head']}, {first['relation']}, {first['tail']})"
        )
    in_test = triple_index(added).isin(test_index)
    if in_test.any():
        raise ValueError(f"S4 release: {int(in_test.sum())} pooled positive(s) are test triples; expected none")
    return added


def load_released_labels(
    test: pd.DataFrame,
    folder: str | os.PathLike | None = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    entities: set[str] | None = None,
    relations: set[str] | None = None,
) -> LabelSet:
    """Load the S4 release as a label set over FB15k-237.

    Levels: ``original`` = FB-Test-O (the dataset's test set), ``sparse`` = FB-Test-S (1,023 sampled test triples),
    ``depth<d>`` = FB-Test-S plus the FB-Test-S-C positives (``Y`` in ``annotations.txt``) that entered the pool at
    depth <= d (``supplementary/pooling_depth.txt``). Every FB-Test-O triple is ``known`` (filtered at every level,
    as in the paper's filtered setting).

    :param test: the dataset's test triples (FB-Test-O), ``head, relation, tail`` labels
    :param folder: the release's ``data`` folder (``../shared/data/kgc-sparsity`` here); None downloads it
    :param cache_dir: download cache when ``folder`` is None (see :func:`fetch_release`)
    :param entities: entity labels the models know; pooled positives using another are dropped (and counted)
    :param relations: relation labels the models know; likewise
    :raises FileNotFoundError: naming a missing release file
    :raises ValueError: when the release contradicts the test set (a sampled triple absent from it, a sampled triple
        not annotated ``Y``, a new positive without pooling depth)
    """
    root = Path(folder) if folder is not None else fetch_release(cache_dir)
    _check_release_folder(root)
    universe_test = unique_triples(test, "load_released_labels: test")
    samples = unique_triples(read_triples_file(root / "FB-Test-S/samples.txt"), "samples.txt")
    indices = [line for line in (root / "FB-Test-S/sample_idxs.txt").read_text().split() if line]
    if len(indices) != len(samples):
        raise ValueError(f"{root / 'FB-Test-S/sample_idxs.txt'}: {len(indices)} indices for {len(samples)} samples")
    annotations = read_triples_file(root / "FB-Test-S-C/annotations.txt", with_label=True)
    depths = read_triples_file(root / "FB-Test-S-C/supplementary/pooling_depth.txt", with_depth=True)
    depths = depths.groupby(TRIPLE_COLUMNS, as_index=False)["depth"].min()

    samples, annotations, dropped = _drop_unknown(samples, annotations, entities, relations)
    test_index = triple_index(universe_test)
    sample_index = triple_index(samples)
    added = _added_positives(root, samples, annotations, depths, test_index)

    universe = pd.concat([universe_test, added[TRIPLE_COLUMNS]], ignore_index=True)
    depth = np.full(len(universe), np.nan)
    depth[test_index.get_indexer(sample_index)] = 0.0
    depth[len(universe_test) :] = added["depth"].to_numpy(dtype=float)
    original = np.zeros(len(universe), dtype=bool)
    original[: len(universe_test)] = True
    triples = universe.assign(depth=depth, original=original, known=original)
    triples = triples.sort_values(TRIPLE_COLUMNS, kind="stable").reset_index(drop=True)

    judgments = annotations.merge(depths, on=TRIPLE_COLUMNS, how="left")
    judgments = judgments.loc[~triple_index(judgments).isin(sample_index)]
    judgments = judgments.dropna(subset=["depth"]).astype({"depth": np.int64})
    judgments = judgments.sort_values(TRIPLE_COLUMNS, kind="stable").reset_index(drop=True)
    max_depth = int(added["depth"].max()) if len(added) else 1
    meta = {
        "source": "released",
        "folder": str(root),
        "num_test": len(universe_test),
        "num_sampled": len(samples),
        "num_added_positive": len(added),
        "num_judged": len(judgments),
        "dropped_unknown": dropped,
    }
    if any(dropped.values()):
        logger.warning("S4 release: dropped triples with entities/relations unknown to the models: %s", dropped)
    return LabelSet(triples=triples, judgments=judgments, max_depth=max(max_depth, 1), meta=meta)


def write_label_set(
    label_set: LabelSet,
    triples_path: str | os.PathLike,
    judgments_path: str | os.PathLike,
    meta_path: str | os.PathLike | None = None,
) -> None:
    """Write the label set as two sorted TSVs (``depth`` empty when unlabelled) and its meta as JSON, atomically."""
    triples = label_set.triples.copy()
    triples["depth"] = triples["depth"].astype("Int64")
    write_tsv(triples, triples_path, sort_by=TRIPLE_COLUMNS)
    write_tsv(label_set.judgments, judgments_path, sort_by=TRIPLE_COLUMNS)
    if meta_path is not None:
        write_json({**label_set.meta, "max_depth": label_set.max_depth}, meta_path)


def read_label_set(triples_path: str | os.PathLike, judgments_path: str | os.PathLike, max_depth: int) -> LabelSet:
    """Read a label set written by :func:`write_label_set`."""
    triples = read_tsv(triples_path)
    for column in TRIPLE_COLUMNS:
        triples[column] = triples[column].astype(str)
    triples["depth"] = triples["depth"].astype(float)
    triples["original"] = triples["original"].astype(str).str.lower().eq("true")
    triples["known"] = triples["known"].astype(str).str.lower().eq("true")
    judgments = read_tsv(judgments_path)
    for column in TRIPLE_COLUMNS:
        judgments[column] = judgments[column].astype(str)
    if int(max_depth) < 1:
        raise ValueError(f"read_label_set: max_depth must be >= 1, got {max_depth}")
    return LabelSet(triples=triples, judgments=judgments, max_depth=int(max_depth))
