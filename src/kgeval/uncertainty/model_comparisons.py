"""Paired comparisons of every two models of a dataset, split and seed: ``tables/model_comparisons.tsv`` and its figure.

For the compared metrics (:class:`ComparedMetrics`, the config's ``comparisons`` section: by default MRR, Hits@10 and
AMRI of the realistic rank; side ``both``), each unordered pair of models (``model_a < model_b``) gets
the difference of their values (a - b), its paired-bootstrap interval over the test triples (the resample counts of
``tables/metrics.tsv``: :func:`kgeval.uncertainty.bootstrap_metrics.triple_counts`, so every model of a dataset and
split sees the same resamples and the difference is paired), and the p-value of the paired sign-flip test over test
triples (:func:`kgeval.uncertainty.comparisons.sign_flip_pvalues`): each triple's difference is the sum of its head and
tail queries' differences, ``1/r_a - 1/r_b`` for MRR, ``[r_a <= 10] - [r_b <= 10]`` for Hits@10, and
``-(r_a - r_b) / (E[MR] - 1)`` for AMRI, whose mean is the AMRI difference exactly because both models rank the same
queries among the same candidates (checked), and one sign flips the whole triple. Holm's correction runs over the pairs
of one dataset, split, seed and metric (the family); ``p_holm`` and ``significant`` are adjusted, the interval is not.

Each row compares two trained models of one seed: it says whether these trained weights differ on this test set, not
whether the architectures do (that needs several seeds, whose training variance the interval would have to cover).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.tables import LP_KEY_COLUMNS
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, canonical_order, triple_counts, triple_units
from kgeval.uncertainty.comparisons import holm, sign_flip_pvalues
from kgeval.uncertainty.resampling import percentile_interval, stream_seed

__all__ = [
    "COMPARED_METRICS",
    "ComparedMetrics",
    "COLUMNS",
    "QueryValues",
    "check_same_queries",
    "metric_values",
    "metric_replicates",
    "read_ranks_tables",
    "compare_models",
    "model_comparisons",
    "model_comparisons_table",
    "model_comparisons_file",
    "comparison_matrix",
    "plot_model_comparisons",
]

#: the metrics compared when no ``comparisons`` section says otherwise (all larger-is-better), and the side
COMPARED_METRICS: tuple[str, ...] = ("mrr", "hits@10", "amri")
SIDE = "both"
_RANK_TYPES = ("optimistic", "realistic", "pessimistic", "nondeterministic")

#: the columns of tables/model_comparisons.tsv, in order
COLUMNS: list[str] = [
    "dataset", "split", "seed", "side", "rank_type", "metric", "model_a", "model_b", "value_a", "value_b",
    "difference", "ci_low", "ci_high", "ci_method", "p_value", "p_holm", "significant", "winner",
]
_KEYS = ["dataset", "split", "seed", "metric", "model_a", "model_b"]


@dataclass(frozen=True)
class ComparedMetrics:
    """What a comparison reads: larger-is-better metrics that are means over queries (``mrr``, ``hits@<k>``) or follow
    from the mean rank (``amri``), and one rank type."""

    metrics: tuple[str, ...] = COMPARED_METRICS
    rank_type: str = "realistic"

    def __post_init__(self) -> None:
        bad = [m for m in self.metrics if not (m in ("mrr", "amri") or _hits_k(m))]
        if bad or not self.metrics:
            raise ValueError(
                f"comparisons.metrics: {bad or 'none'} cannot be compared; use mrr, amri or hits@<k> (k a positive "
                "whole number): larger-is-better metrics whose per-triple differences average to the difference"
            )
        if self.rank_type not in _RANK_TYPES:
            raise ValueError(f"comparisons.rank_type: unknown {self.rank_type!r}; use one of {list(_RANK_TYPES)}")
        if "amri" in self.metrics and self.rank_type != "realistic":
            raise ValueError(
                f"comparisons: amri is defined for the realistic rank only (its expectation assumes it), not for "
                f"{self.rank_type!r}; drop amri or use rank_type: realistic"
            )

    @classmethod
    def from_config(cls, section: Mapping[str, object] | None) -> ComparedMetrics:
        """From the config's ``comparisons`` section (validated: both keys present)."""
        if not section:
            return cls()
        return cls(tuple(section["metrics"]), str(section["rank_type"]))

    def columns(self, ranks: np.ndarray) -> np.ndarray:
        """Per query, the value whose mean gives each metric (the rank itself for AMRI); shape: (n, len(metrics))."""
        out = []
        for metric in self.metrics:
            k = _hits_k(metric)
            out.append(1.0 / ranks if metric == "mrr" else (ranks <= k).astype(float) if k else ranks)
        return np.column_stack(out)


def _hits_k(metric: str) -> int:
    """k of ``hits@<k>``, else 0."""
    head, _, k = metric.partition("@")
    return int(k) if head == "hits" and k.isdigit() and int(k) > 0 else 0


def comparison_method(settings: BootstrapSettings) -> str:
    """The ``ci_method`` of a comparison: the interval, the test, Holm's family, and what one seed compares."""
    interval = settings.describe("test triples (a triple's head and tail queries together)")
    return (
        f"{interval}, paired, not adjusted; p: sign-flip test with one sign per test triple, "
        f"{settings.permutations:,} permutations; p_holm: Holm over the model pairs of one dataset, split, seed and "
        "metric; one trained seed per model: compares trained weights, not architectures"
    )


class QueryValues:
    """One model's realistic ranks in canonical query order, with the per-query values of the compared metrics."""

    def __init__(self, ranks: pd.DataFrame, source: str, compared: ComparedMetrics = ComparedMetrics()) -> None:
        self.source = source
        self.compared = compared
        ordered = canonical_order(ranks)
        self.keys = ordered[[c for c in LP_KEY_COLUMNS if c in ordered.columns]]
        self.num_candidates = ordered["num_candidates"].to_numpy(dtype=np.int64)
        self.ranks = ordered[f"rank_{compared.rank_type}"].to_numpy(dtype=float)
        self.units = triple_units(ordered, source)
        sides = [side for side in ("head", "tail") if side in self.units.rows]
        # the triple of each row in the order of the "both" resample counts (head rows, then tail rows)
        self.row_triples = np.concatenate([self.units.rows[side] for side in sides])
        in_order = np.concatenate([np.flatnonzero(ordered["side"].to_numpy() == side) for side in sides])
        if not np.array_equal(in_order, np.arange(len(ordered))):
            raise ValueError(f"{source}: rows other than head and tail queries; a side must be 'head' or 'tail'")
        # shape: (n, m): e.g. 1/r, [r <= 10], r (the AMRI is computed from the mean rank)
        self.columns = compared.columns(self.ranks)


def check_same_queries(queries: Mapping[str, QueryValues], sources: Mapping[str, str]) -> None:
    """Every model must rank the same queries among the same numbers of candidates."""
    names = sorted(queries)
    first = queries[names[0]]
    for name in names[1:]:
        other = queries[name]
        where = f"{sources[names[0]]} and {sources[name]}"
        if len(other.ranks) != len(first.ranks) or not other.keys.equals(first.keys):
            raise ValueError(f"{where} do not hold the same queries (head, relation, tail, side); cannot pair them")
        if not np.array_equal(other.num_candidates, first.num_candidates):
            i = int(np.flatnonzero(other.num_candidates != first.num_candidates)[0])
            raise ValueError(
                f"{where} give the same query different candidate counts (row {i} in canonical order: "
                f"{first.num_candidates[i]} vs {other.num_candidates[i]}); paired comparisons need the same filtering"
            )


def metric_values(
    columns_mean: np.ndarray, expected_rank: np.ndarray, compared: ComparedMetrics = ComparedMetrics()
) -> np.ndarray:
    """The compared metrics from column means; shape (..., m) from (..., m) and (...)."""
    out = []
    for j, metric in enumerate(compared.metrics):
        if metric != "amri":
            out.append(columns_mean[..., j])
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            amri = (columns_mean[..., j] - expected_rank) / (1.0 - expected_rank)
        out.append(np.where(expected_rank <= 1.0, np.nan, amri))  # every query trivially solved: AMRI undefined
    return np.stack(out, axis=-1)


def metric_replicates(queries: Mapping[str, QueryValues], settings: BootstrapSettings, names: Sequence[str]) -> dict:
    """Each model's compared metrics on every resample; model -> shape: (B, m)."""
    first = next(iter(queries.values()))
    n = first.ranks.size
    expected = 0.5 * (first.num_candidates + 1.0)
    chunks: dict[str, list[np.ndarray]] = {m: [] for m in queries}
    for counts in triple_counts(first.units, settings.resamples, settings.seed, *names):
        both = counts["both"]
        expected_rank = both @ expected / n
        for model, q in queries.items():
            chunks[model].append(metric_values(both @ q.columns / n, expected_rank, q.compared))
    return {model: np.concatenate(c) for model, c in chunks.items()}


def compare_models(
    ranks: Mapping[str, pd.DataFrame],
    dataset: str,
    split: str,
    settings: BootstrapSettings,
    sources: Mapping[str, str] | None = None,
    compared: ComparedMetrics = ComparedMetrics(),
) -> pd.DataFrame:
    """Every pair of models of one dataset, split and seed (the ``seed`` column is left to the caller).

    :param ranks: model -> its ranks table (docs/design.md) on the same queries
    :param dataset: the dataset (names the resample and sign-flip streams, with ``split``)
    :param sources: model -> how to name its table in errors (e.g. its path)
    :return: :data:`COLUMNS` but ``seed``; no rows for fewer than two models
    """
    sources = dict(sources or {m: f"ranks table of {m}" for m in ranks})
    queries = {model: QueryValues(frame, sources[model], compared) for model, frame in sorted(ranks.items())}
    pairs = list(itertools.combinations(sorted(queries), 2))
    if not pairs:
        return pd.DataFrame(columns=[c for c in COLUMNS if c != "seed"])
    check_same_queries(queries, sources)
    first = next(iter(queries.values()))
    expected = float(np.mean(0.5 * (first.num_candidates + 1.0)))
    values = {m: metric_values(q.columns.mean(axis=0), np.asarray(expected), compared) for m, q in queries.items()}
    replicates = metric_replicates(queries, settings, (dataset, split))
    method = comparison_method(settings)
    differences = []
    rows = []
    for a, b in pairs:
        per_query = queries[a].columns - queries[b].columns
        for j, metric in enumerate(compared.metrics):
            if metric == "amri":
                per_query[:, j] = -per_query[:, j] / (expected - 1.0) if expected > 1.0 else np.nan
        for j, metric in enumerate(compared.metrics):
            low, high = percentile_interval(replicates[a][:, j] - replicates[b][:, j], settings.level)
            va, vb = float(values[a][j]), float(values[b][j])
            rows.append((dataset, split, SIDE, compared.rank_type, metric, a, b, va, vb, va - vb, low, high, method))
            differences.append(np.bincount(first.row_triples, weights=per_query[:, j], minlength=first.units.count))
    out = pd.DataFrame(rows, columns=[c for c in COLUMNS[:14] if c != "seed"])
    d = np.vstack(differences)
    p = np.full(len(d), np.nan)
    valid = ~np.isnan(d).any(axis=1)
    if valid.any():
        flips = stream_seed(settings.seed, dataset, split, "sign_flip")
        p[valid] = sign_flip_pvalues(d[valid], settings.permutations, flips)
    out["p_value"] = p
    return out


def _finish(table: pd.DataFrame, level: float) -> pd.DataFrame:
    """Add ``p_holm`` (per dataset, split, seed and metric), ``significant`` and ``winner``."""
    table = table.copy()
    table["p_holm"] = np.nan
    for _, index in table.groupby(["dataset", "split", "seed", "metric"], sort=False).groups.items():
        table.loc[index, "p_holm"] = holm(table.loc[index, "p_value"].to_numpy(dtype=float))
    table["significant"] = (table["p_holm"] <= 1.0 - level).astype(bool)
    a_wins = table["difference"] > 0
    table["winner"] = np.where(~table["significant"], "none", np.where(a_wins, table["model_a"], table["model_b"]))
    return table[COLUMNS]


def model_comparisons(
    ranks: Mapping[tuple[str, str, str, int], pd.DataFrame],
    settings: BootstrapSettings,
    sources: Mapping[tuple[str, str, str, int], str] | None = None,
    compared: ComparedMetrics = ComparedMetrics(),
) -> pd.DataFrame:
    """``tables/model_comparisons.tsv``: :func:`compare_models` for every dataset, split and seed.

    :param ranks: (dataset, model, split, seed) -> ranks table
    :param sources: the same keys -> how to name the table in errors (e.g. its path)
    :return: :data:`COLUMNS`, sorted by dataset, split, seed, metric, model_a, model_b (header only without pairs)
    """
    groups: dict[tuple[str, str, int], dict[str, tuple[pd.DataFrame, str]]] = {}
    for (dataset, model, split, seed), frame in ranks.items():
        source = (sources or {}).get((dataset, model, split, seed), f"ranks of {dataset}/{model}/{seed}/{split}")
        groups.setdefault((dataset, split, int(seed)), {})[model] = (frame, source)
    frames = []
    for (dataset, split, seed), models in sorted(groups.items()):
        table = compare_models(
            {m: f for m, (f, _) in models.items()}, dataset, split, settings, {m: s for m, (_, s) in models.items()},
            compared,
        )
        if len(table):
            table.insert(2, "seed", seed)
            frames.append(table)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = _finish(pd.concat(frames, ignore_index=True), settings.level)
    return out.sort_values(_KEYS, kind="stable").reset_index(drop=True)


def read_ranks_tables(ranks_paths: Sequence[str | os.PathLike]) -> tuple[dict, dict]:
    """Ranks tables ``.../{dataset}/{model}/{seed}/{split}.parquet`` keyed (dataset, model, split, seed), and their
    paths under the same keys."""
    ranks, sources = {}, {}
    for path in ranks_paths:
        p = Path(path)
        if len(p.parts) < 4 or not p.parts[-2].isdigit():
            raise ValueError(f"{path}: expected .../{{dataset}}/{{model}}/{{seed}}/{{split}}.parquet")
        dataset, model, seed = p.parts[-4:-1]
        key = (dataset, model, p.stem, int(seed))
        ranks[key] = pd.read_parquet(p)
        sources[key] = str(path)
    return ranks, sources


def model_comparisons_table(
    ranks_paths: Sequence[str | os.PathLike], settings: BootstrapSettings, compared: ComparedMetrics = ComparedMetrics()
) -> pd.DataFrame:
    """Read ranks tables ``.../{dataset}/{model}/{seed}/{split}.parquet`` and return :func:`model_comparisons`."""
    ranks, sources = read_ranks_tables(ranks_paths)
    return model_comparisons(ranks, settings, sources, compared)


def model_comparisons_file(
    ranks_paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    settings: BootstrapSettings,
    compared: ComparedMetrics = ComparedMetrics(),
) -> pd.DataFrame:
    """:func:`model_comparisons_table`, written atomically (``tables/model_comparisons.tsv``)."""
    table = model_comparisons_table(ranks_paths, settings, compared)
    write_tsv(table, out, sort_by=_KEYS)
    return table


def comparison_matrix(
    table: pd.DataFrame, dataset: str, split: str, seed: int, metric: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The model x model matrix of one metric: cell (i, j) = value of model i minus value of model j.

    :param table: ``tables/model_comparisons.tsv``
    :return: the models (sorted), the differences (shape: (m, m), NaN on the diagonal) and whether each difference is
        significant after Holm's correction (shape: (m, m), symmetric)
    """
    rows = table[
        (table["dataset"] == dataset) & (table["split"] == split) & (table["seed"] == seed) & (table["metric"] == metric)
    ]
    models = sorted(set(rows["model_a"]) | set(rows["model_b"]))
    index = {m: i for i, m in enumerate(models)}
    diff = np.full((len(models), len(models)), np.nan)
    significant = np.zeros(diff.shape, dtype=bool)
    for row in rows.itertuples(index=False):
        i, j = index[row.model_a], index[row.model_b]
        diff[i, j], diff[j, i] = row.difference, -row.difference
        significant[i, j] = significant[j, i] = bool(row.significant)
    return models, diff, significant


def plot_model_comparisons(
    table_path: str | os.PathLike, dataset: str, pdf: str | os.PathLike, png: str | os.PathLike
) -> None:
    """The figure of one dataset: one matrix per metric (columns) and split/seed (rows), significant cells starred."""
    from kgeval.plotting import matrix_panel, new_figure, save_figure

    table = read_tsv(table_path)
    table = table[table["dataset"] == dataset]
    settings = sorted({(str(s), int(k)) for s, k in zip(table["split"], table["seed"])})
    present = set(table["metric"])  # the default metrics in their order, then any other configured ones
    metrics = [m for m in COMPARED_METRICS if m in present or not present] + sorted(present - set(COMPARED_METRICS))
    fig, axes = new_figure(max(1, len(settings)), len(metrics), width=4.6, height=3.8)
    if not settings:
        for ax in axes.ravel():
            ax.set_axis_off()
        axes[0, 0].text(0.0, 0.5, f"{dataset}: fewer than two models, nothing to compare", transform=axes[0, 0].transAxes)
    for row, (split, seed) in enumerate(settings):
        for col, metric in enumerate(metrics):
            models, diff, significant = comparison_matrix(table, dataset, split, seed, metric)
            matrix_panel(axes[row, col], diff, models, marks=significant)
            axes[row, col].set_title(
                f"{metric.upper()}: row - column, {split}, seed {seed}\ncoloured: significant (Holm), grey: not",
                fontsize=9,
            )
    save_figure(fig, pdf, png)
