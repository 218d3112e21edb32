"""S4 at paper scale without training: the authors' released per-system results and label files.

Zhou et al. (2022) released, next to the labels (:mod:`kgeval.studies.s4.labels`), the results of their 13 systems
(``result/`` of ``zhouying20/kgc-sparsity`` at commit 513479a; offline copy in ``{data_dir}/released/kgc-sparsity``):

- ``<test set>/evaluation.csv``: micro and macro Hits@1..10, MR, MRR and the trec_eval measures per system, for
  FB-Test-O (the FB15k-237 test set), FB-Test-S (its 1,023-triple sample), FB-Test-S-C (the sample completed by TREC
  pooling) and WN18RR;
- ``FB-Test-S-C/pooling_depth.csv``: the same per pooling depth 0..10 (depth 0 = FB-Test-S);
- ``<test set>/lp_per_rel_type.csv`` and ``lp_per_rel.csv``: micro metrics per question side and relation category,
  and per relation;
- ``FB-Test-S-C/lp_sample_rel_dist.csv``: micro metrics on FB-Test-S-C re-weighted by FB-Test-S's relation
  distribution (Eq. 1's ``psi``);
- ``<test set>/discriminative_power.csv``: paired t-test p-values per system pair and metric.

This module turns them into kgeval's S4 tables - the long metrics table of
:func:`kgeval.studies.s4.metrics.aggregate_metrics` (levels ``original``, ``sparse``, ``depth1``..``depth10``), so
that :func:`kgeval.studies.s4.analysis.tau_by_depth` and the figures of :mod:`kgeval.studies.s4.figures` apply as they
are - and computes what no released table holds: Table 1 and the pool statistics from the label files, Fig. 2's
relation distributions with their KL divergences, and Table 2's examples with entity names.

Two observations on the release, checked here and logged: depth 0 of ``pooling_depth.csv`` equals FB-Test-S's
``evaluation.csv``; depth 10 equals FB-Test-S-C's ``evaluation.csv`` in every micro metric, but not in the macro ones
(macro MRR differs by up to 0.011), so FB-Test-S-C's ``evaluation.csv`` scores another question set for its macro
metrics. The depth levels use ``pooling_depth.csv`` throughout, as the paper's Figs. 4-5 do.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s4.analysis import kendall_tau, tau_by_depth
from kgeval.studies.s4.categories import CATEGORIES, RELEASED_CATEGORY_FILES, load_released_categories
from kgeval.studies.s4.labels import RELEASE_FILES, RELEASE_URL, TRIPLE_COLUMNS, fetch_release, read_triples_file
from kgeval.studies.s4.metrics import macro_metric_names, micro_metric_names

__all__ = [
    "RESULTS_URL",
    "RESULT_FILES",
    "LABEL_FILES",
    "TEST_SETS",
    "system_name",
    "fetch_results",
    "results_folder",
    "labels_folder",
    "read_release_csv",
    "long_metrics",
    "released_metrics",
    "released_evaluation",
    "released_tau_by_category",
    "released_tau_reweighted",
    "released_discriminative",
    "discriminative_summary",
    "label_set_statistics",
    "pool_statistics",
    "relation_distributions",
    "kl_divergences",
    "read_mid_names",
    "added_positive_examples",
    "relation_mrr",
]

logger = logging.getLogger(__name__)

#: raw-file root of the released results at the commit of the offline copy
RESULTS_URL = RELEASE_URL.rsplit("/", 1)[0] + "/result"

#: the released result files, relative to ``result/``
RESULT_FILES: tuple[str, ...] = (
    "FB-Test-O/evaluation.csv",
    "FB-Test-O/lp_per_rel.csv",
    "FB-Test-O/lp_per_rel_type.csv",
    "FB-Test-O/discriminative_power.csv",
    "FB-Test-S/evaluation.csv",
    "FB-Test-S/lp_per_rel.csv",
    "FB-Test-S/lp_per_rel_type.csv",
    "FB-Test-S-C/evaluation.csv",
    "FB-Test-S-C/lp_per_rel.csv",
    "FB-Test-S-C/lp_per_rel_type.csv",
    "FB-Test-S-C/lp_sample_rel_dist.csv",
    "FB-Test-S-C/pooling_depth.csv",
    "FB-Test-S-C/discriminative_power.csv",
    "WN18RR/evaluation.csv",
    "WN18RR/discriminative_power.csv",
)

#: the label files read here, relative to the release's ``data`` folder (the loader's plus names and pool records)
LABEL_FILES: tuple[str, ...] = (
    *RELEASE_FILES,
    "FB-Test-S-C/supplementary/human_labeled.txt",
    "FB-Test-S-C/supplementary/filtered.txt",
    "FB-Test-O/context/mid2name.txt",
)

#: the release's test sets: FB15k-237's test set, its sample, the completed sample, and WN18RR's test set
TEST_SETS: tuple[str, ...] = ("FB-Test-O", "FB-Test-S", "FB-Test-S-C", "WN18RR")
#: the label level of kgeval's S4 tables each FB15k-237 test set stands for
_LEVELS = {"FB-Test-O": "original", "FB-Test-S": "sparse"}
_SIDES = {"head": "head", "tail": "tail"}
_CATEGORY_NAMES = {Path(name).stem: category for category, name in RELEASED_CATEGORY_FILES.items()}
_SYSTEM_PREFIX = re.compile(r"^(fb15k-237|wn18rr)-")

PathLike = str | os.PathLike


def system_name(name: str) -> str:
    """The system's short name: the release's ``fb15k-237-hitter`` (or ``wn18rr-hitter``) becomes ``hitter``."""
    return _SYSTEM_PREFIX.sub("", str(name))


def fetch_results(cache_dir: PathLike | None = None, url: str = RESULTS_URL) -> Path:
    """Download the released result files (:data:`RESULT_FILES`) once (``pystow``) and return the local folder."""
    import pystow  # lazily: only users without a local copy need it

    module = pystow.Module(base=Path(cache_dir)) if cache_dir is not None else pystow.module("kgeval")
    root = None
    for relative in RESULT_FILES:
        parts = relative.split("/")
        target = module.ensure("kgc-sparsity-results", *parts[:-1], url=f"{url}/{relative}", name=parts[-1])
        root = target.parents[len(parts) - 1]
    assert root is not None
    return root


def _folder(data_dir: PathLike | None, folder: str | None) -> Path | None:
    if folder is None or (data_dir is None and not Path(folder).is_absolute()):
        return None
    return Path(folder) if Path(folder).is_absolute() else Path(data_dir) / folder


def results_folder(data_dir: PathLike | None, folder: str | None) -> Path:
    """The released results: ``{data_dir}/{folder}`` when both are set (or ``folder`` is absolute), else downloaded."""
    path = _folder(data_dir, folder)
    if path is None:
        return fetch_results()
    missing = [name for name in RESULT_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"S4 released results: {path / missing[0]} is missing ({len(missing)} files); point "
            f"studies.s4.released_results.folder at the release's result folder or set it to null to download "
            f"{RESULTS_URL}"
        )
    return path


def labels_folder(data_dir: PathLike | None, folder: str | None) -> Path:
    """The released label files: ``{data_dir}/{folder}``, else downloaded (:func:`fetch_release`)."""
    path = _folder(data_dir, folder)
    if path is None:
        return fetch_release(files=LABEL_FILES)
    missing = [name for name in LABEL_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"S4 release: {path / missing[0]} is missing; point studies.s4.released_results.labels at the release's "
            f"data folder or set it to null to download {RELEASE_URL}"
        )
    return path


def read_release_csv(folder: PathLike, relative: str) -> pd.DataFrame:
    """Read one released CSV; ``System``/``SystemA``/``SystemB`` become short names (:func:`system_name`)."""
    path = Path(folder) / relative
    table = pd.read_csv(path)
    for column in ("System", "SystemA", "SystemB"):
        if column in table.columns:
            table[column] = table[column].map(system_name)
    return table


def _columns(hits_at: Sequence[int], ir_cutoff: int) -> dict[str, tuple[str, str]]:
    """Released column -> (family, kgeval metric name) for the metrics of kgeval's S4 tables."""
    out = {f"micro_{m}": ("micro", m) for m in micro_metric_names(hits_at)}
    for metric in macro_metric_names(hits_at, ir_cutoff):
        if metric.startswith("map@"):
            column = f"map_cut_{ir_cutoff}"
        elif metric.startswith("ndcg@"):
            column = f"ndcg_cut_{ir_cutoff}"
        else:
            column = f"macro_{metric}"
        out[column] = ("macro", metric)
    return out


#: trec_eval's P@10 (the share of relevant documents among the top 10), which Sec. 4.2 quotes for three systems
_PRECISION_AT_10 = {"P_10": ("macro", "p@10")}


def long_metrics(
    table: pd.DataFrame, hits_at: Sequence[int], ir_cutoff: int, extra: Mapping[str, tuple[str, str]] | None = None
) -> pd.DataFrame:
    """A released per-system table in long form: ``system, family, metric, value`` (the metrics of kgeval's tables).

    :param extra: more released columns to keep, as ``column -> (family, metric)``
    :raises ValueError: naming a missing column
    """
    columns = {**_columns(hits_at, ir_cutoff), **dict(extra or {})}
    missing = sorted(set(columns) - set(table.columns))
    if missing:
        raise ValueError(f"released table lacks the column(s) {missing}")
    frames = []
    for column, (family, metric) in columns.items():
        frames.append(
            pd.DataFrame({"system": table["System"], "family": family, "metric": metric, "value": table[column]})
        )
    return pd.concat(frames, ignore_index=True)


def released_metrics(folder: PathLike, hits_at: Sequence[int], ir_cutoff: int) -> pd.DataFrame:
    """kgeval's S4 metrics table from the release: ``level, system, family, metric, value``.

    Levels: ``original`` = FB-Test-O, ``sparse`` = FB-Test-S, ``depth<d>`` = FB-Test-S-C pooled to depth ``d``
    (``pooling_depth.csv``, d = 1..10).

    :raises ValueError: when depth 0 of ``pooling_depth.csv`` is not FB-Test-S
    """
    frames = []
    for test_set, level in _LEVELS.items():
        frames.append(long_metrics(read_release_csv(folder, f"{test_set}/evaluation.csv"), hits_at, ir_cutoff))
        frames[-1].insert(0, "level", level)
    depths = read_release_csv(folder, "FB-Test-S-C/pooling_depth.csv")
    sparse = frames[1].set_index(["system", "family", "metric"])["value"]
    for depth, part in depths.groupby("Depth", sort=True):
        table = long_metrics(part, hits_at, ir_cutoff)
        if depth == 0:
            diff = (table.set_index(["system", "family", "metric"])["value"] - sparse).abs().max()
            if not diff <= 1e-9:
                raise ValueError(f"pooling_depth.csv: depth 0 differs from FB-Test-S/evaluation.csv by {diff:g}")
            continue
        table.insert(0, "level", f"depth{int(depth)}")
        frames.append(table)
    complete = long_metrics(read_release_csv(folder, "FB-Test-S-C/evaluation.csv"), hits_at, ir_cutoff)
    deepest = frames[-1].set_index(["system", "family", "metric"])["value"]
    gap = (complete.set_index(["system", "family", "metric"])["value"] - deepest).abs().groupby(level="family").max()
    logger.info(
        "FB-Test-S-C/evaluation.csv vs the deepest pooling level, largest difference per family: %s", gap.to_dict()
    )
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["level", "system", "family", "metric"], kind="stable").reset_index(drop=True)


def released_evaluation(folder: PathLike, hits_at: Sequence[int], ir_cutoff: int) -> pd.DataFrame:
    """Every test set's released metrics (and trec_eval's P@10): ``test_set, system, family, metric, value``, sorted."""
    frames = []
    for test_set in TEST_SETS:
        table = long_metrics(
            read_release_csv(folder, f"{test_set}/evaluation.csv"), hits_at, ir_cutoff, extra=_PRECISION_AT_10
        )
        table.insert(0, "test_set", test_set)
        frames.append(table)
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["test_set", "system", "family", "metric"], kind="stable").reset_index(drop=True)


def _per_category(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["side"] = out["QuestionType"].map(_SIDES)
    out["category"] = out["RelationType"].map(_CATEGORY_NAMES)
    if out[["side", "category"]].isna().any().any():
        raise ValueError(
            f"lp_per_rel_type.csv: unknown question or relation type in {sorted(set(out['QuestionType']))}, "
            f"{sorted(set(out['RelationType']))}"
        )
    return out.set_index(["side", "category", "System"]).sort_index()


def released_tau_by_category(folder: PathLike, hits_at: Sequence[int]) -> pd.DataFrame:
    """Table 3: Kendall's tau between the system rankings on FB-Test-S and FB-Test-S-C, per side and category.

    :return: ``side, category, metric, tau, pvalue, num_systems``, sorted by side, category (Table 3's order) and
        metric
    """
    sparse = _per_category(read_release_csv(folder, "FB-Test-S/lp_per_rel_type.csv"))
    complete = _per_category(read_release_csv(folder, "FB-Test-S-C/lp_per_rel_type.csv"))
    rows = []
    for side in ("head", "tail"):
        for category in CATEGORIES:
            for metric in micro_metric_names(hits_at):
                column = f"micro_{metric}"
                try:
                    x = sparse.loc[(side, category), column].sort_index()
                    y = complete.loc[(side, category), column].reindex(x.index)
                except KeyError:
                    rows.append((side, category, metric, np.nan, np.nan, 0))
                    continue
                result = kendall_tau(x.to_numpy(), y.to_numpy())
                rows.append((side, category, metric, result.tau, result.pvalue, result.num_systems))
    return pd.DataFrame(rows, columns=["side", "category", "metric", "tau", "pvalue", "num_systems"])


def released_tau_reweighted(folder: PathLike, hits_at: Sequence[int]) -> pd.DataFrame:
    """Table 4: tau between FB-Test-S and FB-Test-S-C micro rankings, FB-Test-S-C weighted by its own relation
    distribution (``complete``: the plain micro mean) or by FB-Test-S's (``sparse``: ``lp_sample_rel_dist.csv``).

    :return: ``distribution, metric, tau, pvalue, num_systems``, sorted
    """
    sparse = read_release_csv(folder, "FB-Test-S/evaluation.csv").set_index("System").sort_index()
    variants = {
        "complete": read_release_csv(folder, "FB-Test-S-C/evaluation.csv").set_index("System"),
        "sparse": read_release_csv(folder, "FB-Test-S-C/lp_sample_rel_dist.csv").set_index("System"),
    }
    rows = []
    for distribution, table in variants.items():
        table = table.reindex(sparse.index)
        for metric in micro_metric_names(hits_at):
            column = f"micro_{metric}"
            result = kendall_tau(sparse[column].to_numpy(), table[column].to_numpy())
            rows.append((distribution, metric, result.tau, result.pvalue, result.num_systems))
    out = pd.DataFrame(rows, columns=["distribution", "metric", "tau", "pvalue", "num_systems"])
    return out.sort_values(["distribution", "metric"], kind="stable").reset_index(drop=True)


def released_discriminative(
    folder: PathLike,
    hits_at: Sequence[int],
    ir_cutoff: int,
    test_sets: Sequence[str] = ("FB-Test-O", "WN18RR", "FB-Test-S-C"),
) -> pd.DataFrame:
    """Fig. 8 data: the released paired t-test p-values, one row per unordered system pair.

    The release lists each pair in both orders with the same p-values; one is kept (``system_a < system_b``).

    :return: ``test_set, family, metric, system_a, system_b, pvalue``, sorted
    :raises ValueError: when the two orders of a pair disagree
    """
    columns = _columns(hits_at, ir_cutoff)
    frames = []
    for test_set in test_sets:
        table = read_release_csv(folder, f"{test_set}/discriminative_power.csv")
        missing = sorted(set(columns) - set(table.columns))
        if missing:
            raise ValueError(f"{test_set}/discriminative_power.csv lacks the column(s) {missing}")
        a, b = table["SystemA"], table["SystemB"]
        forward = table.loc[a < b].set_index(["SystemA", "SystemB"])
        backward = table.loc[a > b].rename(columns={"SystemA": "SystemB", "SystemB": "SystemA"})
        backward = backward.set_index(["SystemA", "SystemB"]).reindex(forward.index)
        cols = list(columns)
        if backward[cols].notna().all().all() and not np.allclose(forward[cols], backward[cols], rtol=1e-9, atol=0):
            raise ValueError(f"{test_set}/discriminative_power.csv: the two orders of a system pair disagree")
        for column, (family, metric) in columns.items():
            part = forward[column].reset_index()
            frames.append(
                pd.DataFrame(
                    {
                        "test_set": test_set,
                        "family": family,
                        "metric": metric,
                        "system_a": part["SystemA"],
                        "system_b": part["SystemB"],
                        "pvalue": part[column].to_numpy(float),
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["test_set", "family", "metric", "system_a", "system_b"], kind="stable").reset_index(
        drop=True
    )


def discriminative_summary(pairs: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per test set and metric: the number of pairs, the mean p-value (the area under Fig. 8's descending curve over
    the number of pairs: smaller = more discriminative) and the pairs significant at ``alpha``.

    :return: ``test_set, family, metric, num_pairs, mean_pvalue, num_significant``, sorted
    """
    grouped = pairs.groupby(["test_set", "family", "metric"], sort=True)["pvalue"]
    out = pd.DataFrame(
        {
            "num_pairs": grouped.size(),
            "mean_pvalue": grouped.mean(),
            "num_significant": grouped.apply(lambda p: int((p < alpha).sum())),
        }
    ).reset_index()
    return out


# ----------------------------------------------------------------------------------------------------------------------
# the label files: Table 1, pool statistics, Fig. 2, Table 2


def _triples(array_or_frame) -> pd.DataFrame:
    frame = (
        pd.DataFrame(np.asarray(array_or_frame), columns=TRIPLE_COLUMNS)
        if not isinstance(array_or_frame, pd.DataFrame)
        else array_or_frame
    )
    return frame[TRIPLE_COLUMNS].astype(str)


def _count_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def label_set_statistics(folder: PathLike, test: np.ndarray | pd.DataFrame) -> pd.DataFrame:
    """Table 1: triples, positives and negatives of FB-Test-O, FB-Test-S and FB-Test-S-C.

    FB-Test-O is the dataset's test file (every triple a positive); FB-Test-S is ``FB-Test-S/samples.txt`` (all
    positives); FB-Test-S-C is ``FB-Test-S-C/annotations.txt``, its Y and N judgments (the sampled triples included).

    :param test: shape: (n, 3), the dataset's test triples as shipped (:func:`kgeval.lp.datasets.labeled_splits`)
    :return: ``test_set, num_triples, num_positives, num_negatives`` in Table 1's order
    """
    folder = Path(folder)
    test = _triples(test)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    rows = [
        ("FB-Test-O", len(test), len(test), 0),
        ("FB-Test-S", len(samples), len(samples), 0),
        (
            "FB-Test-S-C",
            len(annotations),
            int((annotations["label"] == "Y").sum()),
            int((annotations["label"] == "N").sum()),
        ),
    ]
    return pd.DataFrame(rows, columns=["test_set", "num_triples", "num_positives", "num_negatives"])


def pool_statistics(folder: PathLike, test: np.ndarray | pd.DataFrame) -> pd.DataFrame:
    """Sec. 3.1-3.2 numbers of the label files: the pool, its filtering, the positives added per depth.

    :return: ``statistic, value``: ``test_relations`` (relations of FB-Test-O), ``sampled_triples``,
        ``pool_triples``, ``pool_entities``, ``pool_relations`` (``supplementary/pooling_depth.txt``),
        ``human_labelled`` and ``filtered_trivial`` (the two supplementary files), ``added_positives_depth<d>``
        (FB-Test-S-C positives beyond FB-Test-S that entered the pool at depth <= d), ``added_positives_<category>``
        (by the release's relation category)
    """
    folder = Path(folder)
    test = _triples(test)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    pool = read_triples_file(folder / "FB-Test-S-C/supplementary/pooling_depth.txt", with_depth=True)
    pool = pool.groupby(TRIPLE_COLUMNS, as_index=False)["depth"].min()
    sample_index = pd.MultiIndex.from_frame(samples)
    positives = annotations.loc[annotations["label"] == "Y", TRIPLE_COLUMNS].drop_duplicates()
    added = positives.loc[~pd.MultiIndex.from_frame(positives).isin(sample_index)]
    added = added.merge(pool, on=TRIPLE_COLUMNS, how="left")
    rows = [
        ("test_relations", int(test["relation"].nunique())),
        ("sampled_triples", len(samples)),
        ("pool_triples", len(pool)),
        ("pool_entities", int(pd.concat([pool["head"], pool["tail"]]).nunique())),
        ("pool_relations", int(pool["relation"].nunique())),
        ("human_labelled", _count_lines(folder / "FB-Test-S-C/supplementary/human_labeled.txt")),
        ("filtered_trivial", _count_lines(folder / "FB-Test-S-C/supplementary/filtered.txt")),
        ("added_positives", len(added)),
        ("added_positives_without_depth", int(added["depth"].isna().sum())),
    ]
    max_depth = int(pool["depth"].max())
    for depth in range(1, max_depth + 1):
        rows.append((f"added_positives_depth{depth}", int((added["depth"] <= depth).sum())))
    categories = load_released_categories(folder)
    by_category = added["relation"].map(categories).fillna("unknown").value_counts()
    for category in (*CATEGORIES, "unknown"):
        if category != "unknown" or category in by_category:
            rows.append((f"added_positives_{category}", int(by_category.get(category, 0))))
    return pd.DataFrame(rows, columns=["statistic", "value"])


def relation_distributions(folder: PathLike, splits: Mapping[str, np.ndarray | pd.DataFrame]) -> pd.DataFrame:
    """Fig. 2 data: triples per relation in FB-Test-O, FB-Test-S, FB-Test-S-C (its positives) and all of FB15k-237.

    :param splits: the dataset's ``train``, ``valid``, ``test`` triples as shipped
    :return: ``relation, FB-Test-O, FB-Test-S, FB-Test-S-C, FB15k-237`` (counts; every relation of the dataset),
        sorted by FB-Test-O count (descending), then relation
    """
    folder = Path(folder)
    sets = {
        "FB-Test-O": _triples(splits["test"]),
        "FB-Test-S": read_triples_file(folder / "FB-Test-S/samples.txt"),
        "FB-Test-S-C": read_triples_file(folder / "FB-Test-S-C/test.txt"),
        "FB15k-237": pd.concat([_triples(splits[s]) for s in ("train", "valid", "test")], ignore_index=True),
    }
    relations = sorted(set().union(*(set(f["relation"]) for f in sets.values())))
    out = pd.DataFrame({"relation": relations})
    for name, frame in sets.items():
        out[name] = out["relation"].map(frame["relation"].value_counts()).fillna(0).astype(np.int64)
    out = out.sort_values(["FB-Test-O", "relation"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def _kl(p_counts: np.ndarray, q_counts: np.ndarray, pseudo: float) -> float:
    p = p_counts.astype(float) + pseudo
    q = q_counts.astype(float) + pseudo
    p, q = p / p.sum(), q / q.sum()
    mask = p > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


#: the paper's three KL divergences (Sec. 3.2): (first, second) distribution of KL(first || second)
KL_PAIRS: tuple[tuple[str, str], ...] = (
    ("FB-Test-O", "FB-Test-S"),
    ("FB15k-237", "FB-Test-O"),
    ("FB-Test-O", "FB-Test-S-C"),
)


def kl_divergences(distributions: pd.DataFrame, pseudo: float = 1.0) -> pd.DataFrame:
    """KL divergences between the relation distributions of Fig. 2, natural log.

    ``kl`` adds ``pseudo`` (1: Laplace smoothing) to every relation's count over all relations of the dataset before
    normalising; this reproduces the paper's three values (0.0889, 0.2789, 0.2386) for the pairs of
    :data:`KL_PAIRS`, i.e. KL(parent set || derived set): the test set against its sample and its completed sample,
    the whole dataset against its test set. The paper states neither the direction nor the smoothing.
    ``kl_unsmoothed`` is KL(second || first) on the raw distributions (finite because the second set's relations
    all occur in the first), for reference.

    :return: ``first, second, kl, kl_unsmoothed``
    """
    rows = []
    for first, second in KL_PAIRS:
        p, q = distributions[first].to_numpy(), distributions[second].to_numpy()
        unsmoothed = _kl(q, p, 0.0) if np.all(p[q > 0] > 0) else math.inf
        rows.append((first, second, _kl(p, q, pseudo), unsmoothed))
    return pd.DataFrame(rows, columns=["first", "second", "kl", "kl_unsmoothed"])


def read_mid_names(folder: PathLike) -> dict[str, str]:
    """Freebase MID -> entity name, from the release's ``FB-Test-O/context/mid2name.txt``."""
    names: dict[str, str] = {}
    for line in (Path(folder) / "FB-Test-O/context/mid2name.txt").read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            mid, name = line.split("\t", 1)
            names.setdefault(mid.strip(), name.strip())
    return names


def added_positive_examples(folder: PathLike, questions: Sequence[Mapping[str, str]]) -> pd.DataFrame:
    """Table 2: for each question, its FB-Test-S answers and the release's judgments of the pooled answers, by name.

    :param questions: ``{side, relation, anchor}`` with ``side`` the predicted side (``tail`` for ``(s, p, ?)``) and
        ``anchor`` the known entity's name (or MID); a name shared by several MIDs picks the one with an FB-Test-S
        question of that relation
    :return: ``side, relation, anchor, anchor_mid, original_answers, added_positives, judged_negatives`` (names joined
        by ``; `` in the release's order), one row per question, in the given order
    :raises ValueError: for a question that FB-Test-S does not ask
    """
    folder = Path(folder)
    names = read_mid_names(folder)
    mids_of: dict[str, list[str]] = {}
    for mid, name in names.items():
        mids_of.setdefault(name, []).append(mid)
    samples = read_triples_file(folder / "FB-Test-S/samples.txt")
    annotations = read_triples_file(folder / "FB-Test-S-C/annotations.txt", with_label=True)
    sample_index = pd.MultiIndex.from_frame(samples)
    rows = []
    for question in questions:
        side, relation, anchor = question["side"], question["relation"], question["anchor"]
        if side not in ("head", "tail"):
            raise ValueError(f"Table 2 example {question}: side must be head or tail")
        anchor_col, answer_col = ("head", "tail") if side == "tail" else ("tail", "head")
        asked = samples.loc[samples["relation"] == relation, anchor_col]
        candidates = [m for m in mids_of.get(anchor, [anchor]) if m in set(asked)]
        if not candidates:
            raise ValueError(f"Table 2 example {question}: FB-Test-S has no such question")
        mid = candidates[0]
        original = samples.loc[(samples["relation"] == relation) & (samples[anchor_col] == mid), answer_col]
        judged = annotations.loc[(annotations["relation"] == relation) & (annotations[anchor_col] == mid)]
        new = judged.loc[~pd.MultiIndex.from_frame(judged[TRIPLE_COLUMNS]).isin(sample_index)]

        def named(values) -> str:
            return "; ".join(names.get(v, v) for v in values)

        rows.append(
            {
                "side": side,
                "relation": relation,
                "anchor": names.get(mid, mid),
                "anchor_mid": mid,
                "original_answers": named(original),
                "added_positives": named(new.loc[new["label"] == "Y", answer_col]),
                "judged_negatives": named(new.loc[new["label"] == "N", answer_col]),
            }
        )
    return pd.DataFrame(rows)


def relation_mrr(
    folder: PathLike, system: str, test_sets: Sequence[str] = ("FB-Test-O", "FB-Test-S", "FB-Test-S-C")
) -> pd.DataFrame:
    """Fig. 6 data: one system's micro MRR per relation on each test set (``lp_per_rel.csv``).

    :return: ``test_set, relation, micro_mrr``, sorted
    :raises ValueError: for a system the release lacks
    """
    frames = []
    for test_set in test_sets:
        table = read_release_csv(folder, f"{test_set}/lp_per_rel.csv")
        if system not in set(table["System"]):
            raise ValueError(
                f"{test_set}/lp_per_rel.csv has no system {system!r}; it has {sorted(set(table['System']))}"
            )
        part = table.loc[table["System"] == system, ["Relation", "micro_mrr"]]
        frames.append(part.rename(columns={"Relation": "relation"}).assign(test_set=test_set))
    out = pd.concat(frames, ignore_index=True)[["test_set", "relation", "micro_mrr"]]
    return out.sort_values(["test_set", "relation"], kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------------------------
# file wrappers for the Snakemake scripts


def write_metrics(
    *,
    data_dir: PathLike | None,
    folder: str | None,
    hits_at: Sequence[int],
    ir_cutoff: int,
    metrics_out: PathLike,
    evaluation_out: PathLike,
) -> pd.DataFrame:
    """Write the FB15k-237 metrics table (levels) and every test set's released metrics."""
    root = results_folder(data_dir, folder)
    metrics = released_metrics(root, hits_at, ir_cutoff)
    write_tsv(metrics, metrics_out, sort_by=["level", "system", "family", "metric"])
    write_tsv(
        released_evaluation(root, hits_at, ir_cutoff),
        evaluation_out,
        sort_by=["test_set", "system", "family", "metric"],
    )
    return metrics


def write_tau_depth(*, metrics_path: PathLike, out: PathLike) -> pd.DataFrame:
    """Figs. 3-5 data: tau between FB-Test-S's ranking and every level's (:func:`tau_by_depth`)."""
    table = tau_by_depth(read_tsv(metrics_path))
    write_tsv(table, out, sort_by=["family", "metric", "depth"])
    return table


def write_tau_by_category(
    *, data_dir: PathLike | None, folder: str | None, hits_at: Sequence[int], out: PathLike
) -> pd.DataFrame:
    """Write Table 3 (:func:`released_tau_by_category`)."""
    table = released_tau_by_category(results_folder(data_dir, folder), hits_at)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    table = table.assign(_c=table["category"].map(order)).sort_values(["side", "_c", "metric"], kind="stable")
    write_tsv(table.drop(columns="_c"), out, sort_by=[])  # Table 3's order: side, category 1-1 .. N-N, metric
    return table


def write_tau_reweighted(
    *, data_dir: PathLike | None, folder: str | None, hits_at: Sequence[int], out: PathLike
) -> pd.DataFrame:
    """Write Table 4 (:func:`released_tau_reweighted`)."""
    table = released_tau_reweighted(results_folder(data_dir, folder), hits_at)
    write_tsv(table, out, sort_by=["distribution", "metric"])
    return table


def write_discriminative(
    *,
    data_dir: PathLike | None,
    folder: str | None,
    hits_at: Sequence[int],
    ir_cutoff: int,
    pairs_out: PathLike,
    summary_out: PathLike,
) -> pd.DataFrame:
    """Write Fig. 8's p-values per pair and their summary per test set and metric."""
    pairs = released_discriminative(results_folder(data_dir, folder), hits_at, ir_cutoff)
    write_tsv(pairs, pairs_out, sort_by=["test_set", "family", "metric", "system_a", "system_b"])
    write_tsv(discriminative_summary(pairs), summary_out, sort_by=["test_set", "family", "metric"])
    return pairs


def _shipped_splits(dataset_key: str, dataset_spec: Mapping, data_dir: PathLike | None) -> dict[str, np.ndarray]:
    from kgeval.lp.datasets import labeled_splits

    return labeled_splits(dataset_key, dict(dataset_spec), data_dir)


def write_label_sets(
    *,
    data_dir: PathLike | None,
    labels: str | None,
    dataset_key: str,
    dataset_spec: Mapping,
    table1_out: PathLike,
    pool_out: PathLike,
) -> pd.DataFrame:
    """Write Table 1 and the pool statistics from the label files and the dataset's shipped test file."""
    folder = labels_folder(data_dir, labels)
    test = _shipped_splits(dataset_key, dataset_spec, data_dir)["test"]
    table = label_set_statistics(folder, test)
    write_tsv(table, table1_out, sort_by=[])  # Table 1's order
    write_tsv(pool_statistics(folder, test), pool_out, sort_by=[])  # Sec. 3's order
    return table


def write_relation_distribution(
    *,
    data_dir: PathLike | None,
    labels: str | None,
    dataset_key: str,
    dataset_spec: Mapping,
    distribution_out: PathLike,
    kl_out: PathLike,
) -> pd.DataFrame:
    """Write Fig. 2's relation distributions and the KL divergences between them."""
    folder = labels_folder(data_dir, labels)
    table = relation_distributions(folder, _shipped_splits(dataset_key, dataset_spec, data_dir))
    write_tsv(table, distribution_out, sort_by=[])  # by FB-Test-O count, as the figure
    write_tsv(kl_divergences(table), kl_out, sort_by=[])  # the paper's order
    return table


def write_examples(
    *, data_dir: PathLike | None, labels: str | None, questions: Sequence[Mapping[str, str]], out: PathLike
) -> pd.DataFrame:
    """Write Table 2 (:func:`added_positive_examples`)."""
    table = added_positive_examples(labels_folder(data_dir, labels), questions)
    write_tsv(table, out, sort_by=[])  # the configured order
    return table


def write_relation_mrr(*, data_dir: PathLike | None, folder: str | None, system: str, out: PathLike) -> pd.DataFrame:
    """Write Fig. 6's per-relation micro MRR of one system."""
    table = relation_mrr(results_folder(data_dir, folder), system)
    write_tsv(table, out, sort_by=["test_set", "relation"])
    return table
