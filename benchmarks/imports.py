"""Benchmark: CPU seconds every Snakemake job pays before its work starts (its script's imports and ``log_to``).

Each job of a run is a fresh Python process, so what its script imports is paid once per job: torch alone costs about
2 s of CPU. For every ``scripts/**/*.py`` this runs, in a fresh interpreter, the script's top-level imports and (when
the script imports it) an empty ``with log_to(<file>, 1):`` block, which is what a job does before its first line of
work, and reports the child's user+system CPU seconds (median of ``--repeats``) and which heavy libraries got loaded.

With ``--baseline REV`` the same is measured for ``src/`` and ``scripts/`` of a git revision (extracted with
``git archive`` into a temporary folder), side by side. With ``--jobs``, a dry run of the default config counts the jobs
of each rule, and the per-script seconds are weighted by them: the start-up CPU of the whole default run.

    python benchmarks/imports.py [--baseline 7af88de] [--repeats 3] [--jobs [--min-jobs 3]]

Writes benchmarks/results/imports.tsv (one row per script) and benchmarks/results/imports.json (totals, load average).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import pandas as pd
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

REPO = Path(__file__).resolve().parents[1]
OUT = RESULTS

#: libraries whose import costs a second or more of CPU; a job that only reads TSVs should load none of them
HEAVY = ("torch", "pykeen", "sklearn", "scipy", "matplotlib", "seaborn")


def import_block(script: Path) -> str:
    """The code a job runs before its work: the script's top-level imports, then an empty ``log_to`` block if used."""
    tree = ast.parse(script.read_text())
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    lines = [ast.unparse(node) for node in imports]
    uses_log_to = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "kgeval.logs"
        and any(alias.name == "log_to" for alias in node.names)
        for node in imports
    )
    if uses_log_to:
        # a job's rule always has threads >= 1, which log_to passes on to torch
        lines += ["import tempfile as _t", "with log_to(_t.mktemp(), 1):", "    pass"]
    return "\n".join(lines)


def cpu_seconds(code: str, src: Path) -> tuple[float, list[str]]:
    """User+system CPU seconds of a fresh interpreter running ``code`` with ``src`` first on the path; heavy modules."""
    report = f"\nimport sys as _s\nprint(','.join(m for m in {HEAVY!r} if m in _s.modules))"
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", code + report], env=env, capture_output=True, text=True, check=False, cwd=src.parent
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"import block failed:\n{code}\n{done.stderr[-2000:]}")
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    heavy = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return seconds, [m for m in heavy.split(",") if m]


def measure(tree: Path, repeats: int, only: set[str] | None = None) -> pd.DataFrame:
    """Per script of ``tree/scripts``: median CPU seconds of its import block over ``repeats`` runs; heavy libraries."""
    rows = []
    for script in sorted((tree / "scripts").rglob("*.py")):
        if only is not None and script.relative_to(tree).as_posix() not in only:
            continue
        code = import_block(script)
        runs = [cpu_seconds(code, tree / "src") for _ in range(repeats)]
        rows.append(
            {
                "script": script.relative_to(tree).as_posix(),
                "cpu_s": statistics.median(seconds for seconds, _ in runs),
                "heavy": ",".join(runs[-1][1]) or "-",
            }
        )
        print(f"{rows[-1]['script']}\t{rows[-1]['cpu_s']:.2f}\t{rows[-1]['heavy']}", file=sys.stderr)
    return pd.DataFrame(rows)


def extract(revision: str, into: Path) -> Path:
    """``src/``, ``scripts/`` and ``workflow/`` of ``revision`` (via ``git archive``) under ``into``; the folder."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "src", "scripts", "workflow"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def rule_scripts(workflow: Path) -> list[tuple[re.Pattern[str], str]]:
    """(rule-name pattern, script path) of every rule in ``workflow/rules/*.smk`` that runs a script.

    A rule made in a loop is named by an f-string (``name: f"plot_s2_{_slug}"``); its placeholders match any name.
    """
    pairs = []
    for smk in sorted((workflow / "rules").glob("*.smk")):
        blocks = re.split(r"^\s*(?:local)?rule\b", smk.read_text(), flags=re.MULTILINE)[1:]
        for block in blocks:
            script = re.search(r"script:\s*\n\s*[\"'](?:\.\./)*(scripts/[^\"']+)[\"']", block)
            if script is None:
                continue
            named = re.match(r"\s*(\w+)\s*:", block)
            if named is not None:
                pattern = re.escape(named.group(1))
            else:
                fstring = re.search(r"name:\s*\n\s*f?[\"']([^\"']+)[\"']", block)
                if fstring is None:
                    continue
                pattern = re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(fstring.group(1)))
            pairs.append((re.compile(pattern + "$"), script.group(1)))
    return pairs


def job_counts() -> pd.Series:
    """Jobs per script in a dry run of the default config (in a fresh clone of HEAD, so nothing is up to date)."""
    with tempfile.TemporaryDirectory(prefix="kgeval-imports-") as tmp:
        clone = Path(tmp) / "kgeval"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        snakemake = Path(sys.executable).with_name("snakemake")
        done = subprocess.run(
            [str(snakemake), "--dry-run", "--cores", "2"], cwd=clone, capture_output=True, text=True, check=True
        )
        pairs = rule_scripts(clone / "workflow")
    counts: dict[str, int] = {}
    stats = done.stdout.split("Job stats:", 1)[1]
    for line in stats.splitlines():
        fields = line.split()
        if fields[:1] == ["total"]:
            break  # the end of the first table (a dry run prints the table twice)
        if len(fields) != 2 or not fields[1].isdigit() or fields[0] == "job":
            continue
        for pattern, script in pairs:
            if pattern.match(fields[0]):
                counts[script] = counts.get(script, 0) + int(fields[1])
                break
    return pd.Series(counts, name="jobs", dtype="int64")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a git revision to measure side by side (e.g. 7af88de)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", action="store_true", help="weight by the default run's jobs per script (dry run)")
    parser.add_argument("--min-jobs", type=int, default=0, help="with --jobs: only scripts with at least this many")
    args = parser.parse_args()

    counts = job_counts() if args.jobs else None
    only = set(counts[counts >= args.min_jobs].index) if counts is not None and args.min_jobs > 0 else None
    table = measure(REPO, args.repeats, only).rename(columns={"cpu_s": "after_cpu_s", "heavy": "after_heavy"})
    summary: dict[str, object] = {
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip(),
        "repeats": args.repeats,
        "scripts": len(table),
        "after_cpu_s_sum": round(float(table["after_cpu_s"].sum()), 1),
    }
    if args.baseline:
        with tempfile.TemporaryDirectory(prefix="kgeval-baseline-") as tmp:
            base = measure(extract(args.baseline, Path(tmp)), args.repeats, only)
        base = base.rename(columns={"cpu_s": "before_cpu_s", "heavy": "before_heavy"})
        table = base.merge(table, on="script", how="outer")
        table = table[["script", "before_cpu_s", "after_cpu_s", "before_heavy", "after_heavy"]]
        summary["baseline"] = args.baseline
        summary["before_cpu_s_sum"] = round(float(table["before_cpu_s"].sum()), 1)
    if counts is not None:
        table["jobs"] = table["script"].map(counts).fillna(0).astype("int64")
        summary["jobs"] = int(table["jobs"].sum())
        summary["jobs_in_run"] = int(counts.sum())
        summary["min_jobs"] = args.min_jobs
        for side in ("before", "after"):
            if f"{side}_cpu_s" in table:
                summary[f"{side}_job_cpu_s"] = round(float((table[f"{side}_cpu_s"] * table["jobs"]).sum()), 1)
    summary["load_average"] = [round(x, 2) for x in os.getloadavg()]

    OUT.mkdir(parents=True, exist_ok=True)
    stamp(table).to_csv(OUT / "imports.tsv", sep="\t", index=False, float_format="%.2f")
    (OUT / "imports.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
