"""Benchmark: what resampling test triples instead of queries changes in a tier's foundation tables, and what it costs.

For every ranks table of a finished tier run (``<results>/ranks/{dataset}/{model}/{seed}/{split}.parquet``), this
tree's ``src/`` and a baseline revision's (extracted with ``git archive``) each compute, in a fresh interpreter, the
intervals of every metric (``metrics_with_intervals``, the job of ``compute_metrics``) and the paired comparisons
(``model_comparisons_table``, the job of ``table_model_comparisons``) with the tier's ``uncertainty`` settings, in
alternating rounds. Written:

- ``<out>_widths.tsv``: per ranks table and metric (side ``both``, realistic; MRR, Hits@10, AMRI, ZMRR) the interval
  of each side and the ratio of the widths (this tree over the baseline);
- ``<out>_comparisons.tsv``: per compared pair and metric, the p-values and significance of each side;
- ``<out>.tsv``: one row with the seconds of each side (median over rounds), their ratio, the median width ratio, and
  how many comparisons changed significance, with the host columns (``benchmarks/host.py``).

Run: ``python benchmarks/unit_change.py --results results --config config/config.yaml --baseline ef83fc1``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]
WIDTH_METRICS = ("mrr", "hits@10", "amri", "zmrr")


def worker(results: Path, uncertainty: dict, out: Path) -> None:
    """Compute both tables with whichever ``kgeval`` is on the path; write them and the seconds to ``out``."""
    from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, metrics_with_intervals
    from kgeval.uncertainty.model_comparisons import model_comparisons_table

    settings = BootstrapSettings.from_config(uncertainty)
    paths = sorted(p for p in (results / "ranks").glob("*/*/*/*.parquet") if p.stem in ("train", "valid", "test"))
    start = time.perf_counter()
    frames = []
    for path in paths:
        dataset, model, seed = path.parts[-4:-1]
        table = metrics_with_intervals(pd.read_parquet(path), dataset, path.stem, settings, source=str(path))
        frames.append(table.assign(dataset=dataset, model=model, seed=int(seed), split=path.stem))
    metrics_seconds = time.perf_counter() - start
    start = time.perf_counter()
    comparisons = model_comparisons_table(paths, settings)
    comparisons_seconds = time.perf_counter() - start
    pd.concat(frames).to_parquet(out / "metrics.parquet")
    comparisons.to_parquet(out / "comparisons.parquet")
    (out / "seconds.json").write_text(json.dumps({"metrics": metrics_seconds, "comparisons": comparisons_seconds}))


def baseline_src(revision: str, scratch: Path) -> Path:
    """The ``src/`` of a git revision (with the schema it reads its defaults from), extracted into ``scratch``."""
    archive = scratch / "baseline.tar"
    command = ["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, "src", "workflow/schemas"]
    subprocess.run(command, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(scratch / "baseline", filter="data")
    return scratch / "baseline" / "src"


def run_side(src: Path, args: argparse.Namespace, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{Path(__file__).resolve().parent}"}
    command = [sys.executable, __file__, "--worker", str(out), "--results", str(args.results), "--config", args.config]
    subprocess.run(command, check=True, env=env, cwd=ROOT)
    return json.loads((out / "seconds.json").read_text())


def uncertainty_section(config: str) -> dict:
    from kgeval.config import load_config

    return dict(load_config(config)["uncertainty"])


def compare(now: Path, before: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The width table and the comparisons table of the two sides (module docstring)."""
    keys = ["dataset", "model", "seed", "split", "metric"]
    select = lambda t: t[(t.side == "both") & (t.rank_type == "realistic") & t.metric.isin(WIDTH_METRICS)]  # noqa: E731
    a, b = (select(pd.read_parquet(p / "metrics.parquet")) for p in (now, before))
    widths = a[keys + ["value", "ci_low", "ci_high"]].merge(
        b[keys + ["ci_low", "ci_high"]], on=keys, suffixes=("", "_baseline"), validate="one_to_one"
    )
    widths["width_ratio"] = (widths.ci_high - widths.ci_low) / (widths.ci_high_baseline - widths.ci_low_baseline)
    pair = ["dataset", "split", "seed", "metric", "model_a", "model_b"]
    c, d = (pd.read_parquet(p / "comparisons.parquet") for p in (now, before))
    comparisons = c[pair + ["difference", "p_value", "p_holm", "significant"]].merge(
        d[pair + ["p_value", "p_holm", "significant"]], on=pair, suffixes=("", "_baseline"), validate="one_to_one"
    )
    return widths.sort_values(keys), comparisons.sort_values(pair)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--baseline", default="ef83fc1")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default="unit_change_default")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.results = args.results.resolve()
    if args.worker:
        worker(args.results, uncertainty_section(args.config), args.worker)
        return
    seconds: dict[str, list[dict]] = {"now": [], "baseline": []}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        sides = {"now": ROOT / "src", "baseline": baseline_src(args.baseline, scratch)}
        for round_ in range(args.repeats):
            for side, src in sides.items():
                seconds[side].append(run_side(src, args, scratch / side))
        widths, comparisons = compare(scratch / "now", scratch / "baseline")
    widths.to_csv(RESULTS / f"{args.out}_widths.tsv", sep="\t", index=False)
    comparisons.to_csv(RESULTS / f"{args.out}_comparisons.tsv", sep="\t", index=False)
    median = {
        side: {k: statistics.median(r[k] for r in runs) for k in ("metrics", "comparisons")}
        for side, runs in seconds.items()
    }
    lost = int((comparisons.significant_baseline & ~comparisons.significant).sum())
    gained = int((~comparisons.significant_baseline & comparisons.significant).sum())
    row = {
        "results": str(args.results.relative_to(ROOT) if args.results.is_relative_to(ROOT) else args.results),
        "baseline": args.baseline,
        "ranks_tables": int(widths[["dataset", "model", "seed", "split"]].drop_duplicates().shape[0]),
        "metrics_seconds": round(median["now"]["metrics"], 2),
        "metrics_seconds_baseline": round(median["baseline"]["metrics"], 2),
        "metrics_ratio": round(median["now"]["metrics"] / median["baseline"]["metrics"], 3),
        "comparisons_seconds": round(median["now"]["comparisons"], 2),
        "comparisons_seconds_baseline": round(median["baseline"]["comparisons"], 2),
        "comparisons_ratio": round(median["now"]["comparisons"] / median["baseline"]["comparisons"], 3),
        "mrr_width_ratio_median": round(float(np.median(widths.width_ratio[widths.metric == "mrr"])), 3),
        "mrr_width_ratio_min": round(float(widths.width_ratio[widths.metric == "mrr"].min()), 3),
        "mrr_width_ratio_max": round(float(widths.width_ratio[widths.metric == "mrr"].max()), 3),
        "comparisons": len(comparisons),
        "significant_baseline": int(comparisons.significant_baseline.sum()),
        "significant": int(comparisons.significant.sum()),
        "lost_significance": lost,
        "gained_significance": gained,
    }
    stamp(pd.DataFrame([row])).to_csv(RESULTS / f"{args.out}.tsv", sep="\t", index=False)
    print(pd.Series(row).to_string())


if __name__ == "__main__":
    main()
