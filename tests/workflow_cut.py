"""The one-dataset cut of config/test.yaml that the SLURM and GPU tests run (every rule kind, 68 jobs instead of
106), and the comparison of its per-job tables with the local run of config/test.yaml (tests/test_slurm.py)."""

from __future__ import annotations

import re
from pathlib import Path

#: measured times are no results: tables of them are left out, columns (``*seconds*``) and rows (S5's ``t_*``,
#: ``pct_delta_t*`` and ``ns_per_*`` metrics, and the claims built from them, ``s5.t_*``) of them dropped
TIMING_TABLES = ("table1_timing.tsv", "table1_timing_paper.tsv", "fig4_timing.tsv")
TIMING_COLUMNS = r"seconds"
TIMING_METRICS = r"^(t_|pct_delta_t|ns_per_)"
TIMING_CLAIMS = r"^s\d+\.t_"


def tables(results: Path) -> dict[str, Path]:
    return {
        str(path.relative_to(results)): path
        for path in sorted(results.rglob("*.tsv"))
        if "logs" not in path.parts and "benchmarks" not in path.parts and path.name not in TIMING_TABLES
    }


def without_timings(table):
    table = table.drop(columns=[c for c in table.columns if re.search(TIMING_COLUMNS, c)])
    if "metric" in table.columns:
        table = table[~table.metric.astype(str).str.match(TIMING_METRICS)]
    if "claim" in table.columns:
        table = table[~table.claim.astype(str).str.match(TIMING_CLAIMS)]
    return table.reset_index(drop=True)


_NUMBER = re.compile(r"[-+]?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?")


def text_close(a: str, b: str) -> bool:
    """Two texts (a claims table's ``kgeval`` cell) equal but for numbers that differ by at most a unit in the last
    printed digit (or 1e-6 relative): the words, the number of numbers and every integer count must match."""
    if a == b:
        return True
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.finditer(a), _NUMBER.finditer(b)):
        decimals = len(x.group(1) or "")
        if decimals == 0 and x.group(0) != y.group(0):
            return False
        tolerance = max(1e-6 * abs(float(x.group(0))), 1.01 * 10.0 ** -decimals)
        if abs(float(x.group(0)) - float(y.group(0))) > tolerance:
            return False
    return True


#: the one-dataset cut of config/test.yaml that the SLURM test runs: Nations only (tiny left out), one training size
#: and seed of S1's test-size sweep, two of S3's six methods. Every rule of config/test.yaml still has a job
#: (60 rules, 68 jobs instead of 106: a dry run of both lists the same rules), and the jobs it keeps have the inputs
#: and settings of the same jobs in the local run of config/test.yaml, so their tables can be compared with it
SMALL_CUT = {
    "datasets": ["nations"],
    "s1_num_train": [20],
    "s1_seeds": [0],
    "s3_models": ["gcn_align", "name_similarity"],
}

#: path components of the per-job tables that the cut and the full config share (one dataset's, one pair's jobs);
#: tables outside them collate over datasets, models or settings, which the cut has fewer of
SHARED_JOB_PARTS = ("nations", "umls_two_view")


def small_config(workdir: Path) -> str:
    """Write the cut of config/test.yaml (:data:`SMALL_CUT`) as ``config/slurm_small.yaml``; return that path."""
    import yaml

    config = yaml.safe_load((workdir / "config" / "test.yaml").read_text())
    config["datasets"] = {key: config["datasets"][key] for key in SMALL_CUT["datasets"]}
    testsize = config["studies"]["s1"]["testsize"]
    testsize["num_train"], testsize["seeds"] = SMALL_CUT["s1_num_train"], SMALL_CUT["s1_seeds"]
    config["studies"]["s3"]["models"] = SMALL_CUT["s3_models"]
    (workdir / "config" / "slurm_small.yaml").write_text(yaml.safe_dump(config))
    return "config/slurm_small.yaml"


def per_job(name: str) -> bool:
    """Whether a table is one job's output that the cut shares with the full config (module doc of SMALL_CUT).

    S1's test-size tables directly under ``s1/testsize/<pair>/`` collate the sweep's runs, so they are left out."""
    parts = Path(name).parts
    collated_sweep = parts[:2] == ("s1", "testsize") and len(parts) == 4
    return any(part in SHARED_JOB_PARTS for part in parts) and not collated_sweep


def compare_tables(local: Path, slurm: Path) -> tuple[list[str], list[str]]:
    """Compare every per-job table the SLURM run of the cut wrote (:func:`per_job`) with the local run's:
    (byte-equal tables, tables equal as numbers within 1e-6 relative). Every table of the SLURM run must exist in the
    local run too (the cut writes no table the full config does not).

    A table differs only in the last digits where a trained model's float sums ran on another number of threads (one
    locally, ``--max-threads`` under the profile); anything else fails. Text cells with numbers in them (the claims
    tables' ``kgeval`` column, rounded to four decimals) may differ by one unit in their last printed digit.
    """
    import pandas as pd

    same, close = [], []
    local_tables, slurm_tables = tables(local), tables(slurm)
    assert set(slurm_tables) <= set(local_tables), sorted(set(slurm_tables) - set(local_tables))
    for name, other in slurm_tables.items():
        if not per_job(name):
            continue
        path = local_tables[name]
        if path.read_bytes() == other.read_bytes():
            same.append(name)
            continue
        a, b = pd.read_csv(path, sep="\t"), pd.read_csv(other, sep="\t")
        a, b = without_timings(a), without_timings(b)
        assert list(a.columns) == list(b.columns) and len(a) == len(b), f"{name}: shapes differ"
        numeric = pd.api.types.is_numeric_dtype
        text = [c for c in a.columns if not (numeric(a[c]) and numeric(b[c]))]
        for column in text:
            for row, (x, y) in enumerate(zip(map(str, a[column].tolist()), map(str, b[column].tolist()))):
                assert text_close(x, y), f"{name}, row {row}, column {column}: {x!r} (local) vs {y!r} (SLURM)"
        numbers = [c for c in a.columns if c not in text]
        pd.testing.assert_frame_equal(a[numbers], b[numbers], check_exact=False, rtol=1e-6, atol=1e-9, obj=name)
        close.append(name)
    return same, close
