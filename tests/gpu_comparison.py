"""The comparison behind tests/test_gpu_workflow.py: a GPU run's model metrics against a CPU run's, within the CPU
run's own uncertainty.

Training on CUDA starts from the same parameters as on the CPU (kgeval builds the model on the CPU and moves it), but
PyKEEN's negative sampler draws on the device of the batch, so the CUDA generator draws other negatives: the GPU
model is another draw of the same training, not the same model. Its metrics may therefore move by about the test
set's own sampling uncertainty, and no more: the tolerance of each metric is the width of the CPU run's 95 %
bootstrap interval (the ``ci_low`` and ``ci_high`` columns of every metrics table), with a floor for metrics whose
interval is a point.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: the metrics compared: realistic ranks, both sides, the bounded metrics the claims use
COMPARED_METRICS = ("mrr", "hits@1", "hits@3", "hits@10", "amri")
#: least tolerance of a metric (for intervals of zero width, e.g. hits@10 = 1 on every bootstrap resample)
TOLERANCE_FLOOR = 0.02


def metrics_tables(results: Path) -> dict[str, Path]:
    """Every model's metrics table of a run (``metrics/<dataset>/<model>/<seed>/<split>.tsv``), by relative path."""
    return {str(p.relative_to(results)): p for p in sorted((results / "metrics").glob("*/*/*/*.tsv"))}


def metric_differences(cpu_results: Path, gpu_results: Path) -> pd.DataFrame:
    """One row per metrics table of the GPU run and compared metric: ``table, metric, cpu, gpu, difference,
    tolerance, within``. A table of the GPU run that the CPU run lacks, or a compared metric either lacks, is an
    error (the runs must be of the same config)."""
    cpu, gpu = metrics_tables(cpu_results), metrics_tables(gpu_results)
    if not gpu:
        raise ValueError(f"no metrics tables under {gpu_results / 'metrics'}")
    missing = sorted(set(gpu) - set(cpu))
    if missing:
        raise ValueError(f"metrics tables of the GPU run missing from the CPU run: {missing}")
    rows = []
    for name, path in gpu.items():
        a, b = (_realistic(pd.read_csv(p, sep="\t"), p) for p in (cpu[name], path))
        for metric in COMPARED_METRICS:
            for table, where in ((a, cpu[name]), (b, path)):
                if metric not in table.index:
                    raise ValueError(f"{where}: no realistic '{metric}' row for side 'both'")
            width = float(a.loc[metric, "ci_high"] - a.loc[metric, "ci_low"])
            difference = abs(float(b.loc[metric, "value"]) - float(a.loc[metric, "value"]))
            tolerance = max(width, TOLERANCE_FLOOR)
            rows.append((name, metric, float(a.loc[metric, "value"]), float(b.loc[metric, "value"]), difference,
                         tolerance, difference <= tolerance))
    return pd.DataFrame(rows, columns=["table", "metric", "cpu", "gpu", "difference", "tolerance", "within"])


def _realistic(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The realistic-rank rows of side ``both``, indexed by metric."""
    needed = {"side", "rank_type", "metric", "value", "ci_low", "ci_high"}
    if not needed <= set(table.columns):
        raise ValueError(f"{path}: expected columns {sorted(needed)}, got {list(table.columns)}")
    rows = table[(table["side"] == "both") & (table["rank_type"] == "realistic")]
    return rows.set_index("metric")
