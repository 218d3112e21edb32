"""S4 tables from the authors' released per-system results (:mod:`kgeval.studies.s4.release_files`).

They become kgeval's S4 tables - the long metrics table of :func:`kgeval.studies.s4.metrics.aggregate_metrics`
(levels ``original``, ``sparse``, ``depth1``..``depth10``), so that :func:`kgeval.studies.s4.analysis.tau_by_depth`
and the figures of :mod:`kgeval.studies.s4.figures` apply as they are - and Tables 3-4, Fig. 6's per-relation MRR and
Fig. 8's p-values.

Two observations on the release, checked here and logged: depth 0 of ``pooling_depth.csv`` equals FB-Test-S's
``evaluation.csv``; depth 10 equals FB-Test-S-C's ``evaluation.csv`` in every micro metric, but not in the macro ones
(macro MRR differs by up to 0.011), so FB-Test-S-C's ``evaluation.csv`` scores another question set for its macro
metrics. The depth levels use ``pooling_depth.csv`` throughout, as the paper's Figs. 4-5 do.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.studies.s4.analysis import kendall_tau
from kgeval.studies.s4.categories import CATEGORIES, RELEASED_CATEGORY_FILES
from kgeval.studies.s4.metrics import macro_metric_names, micro_metric_names
from kgeval.studies.s4.release_files import TEST_SETS, PathLike, read_release_csv

__all__ = [
    "long_metrics",
    "released_metrics",
    "released_evaluation",
    "released_tau_by_category",
    "released_tau_reweighted",
    "released_discriminative",
    "discriminative_summary",
    "relation_mrr",
]

logger = logging.getLogger(__name__)

#: the label level of kgeval's S4 tables each FB15k-237 test set stands for
_LEVELS = {"FB-Test-O": "original", "FB-Test-S": "sparse"}
_SIDES = {"head": "head", "tail": "tail"}
_CATEGORY_NAMES = {Path(name).stem: category for category, name in RELEASED_CATEGORY_FILES.items()}


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


