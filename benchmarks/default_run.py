"""Benchmark: wall time of the whole default run (``snakemake --cores N`` on config/config.yaml), with job time per rule.

The run happens in a fresh clone of this repository's HEAD (so no result of an earlier run is reused) and uses this
checkout's Python environment. Snakemake's own log gives each job's start and end; the script sums them per rule,
which shows where the time goes (training, ranking, and the start-up cost that every job, a fresh Python process,
pays).

With ``--modes cold warm`` the run is made twice, one after the other, each in its own fresh clone: ``cold`` with
``KGEVAL_FORKSERVER=off`` (every job a fresh interpreter, as before the fork server), ``warm`` as a user runs it (jobs
forked from the pre-imported server, :mod:`kgeval.runtime.forkserver`). The script then compares every TSV of the two
``results/`` trees: identical bytes, or which columns (and, for key/value tables, which keys) differ; only columns of
measured seconds may differ (Snakemake's ``benchmarks/``, S3's and S5's timings).

With ``--modes baseline warm --baseline COMMIT`` the same comparison is made between an earlier commit and HEAD, both
warm, one after the other on the same machine.

    python benchmarks/default_run.py [--cores 2] [--modes warm] [--baseline COMMIT] [--keep] [--snakemake-args "..."]
        [--out NAME]

Writes benchmarks/results/<NAME>_<mode>.tsv (one row per rule: jobs, job seconds, mean seconds per job),
benchmarks/results/<NAME>.json (per mode: wall time, job count, total job seconds, CPU times; the comparison) and, with two
modes, benchmarks/results/<NAME>_compare.tsv (one row per TSV that differs).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
from host import RESULTS, host_columns, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

REPO = Path(__file__).resolve().parents[1]
OUT = RESULTS

#: issue #15: the run at commit 7af88de (fresh clone, 2 idle cores) and the goal, in wall seconds
BASELINE_WALL_SECONDS = 742.0  # 12 min 22 s; 1,452 s CPU; 228 jobs
GOAL_WALL_SECONDS = 480.0  # 8 minutes

_STAMP = re.compile(r"^\[(\w{3} \w{3}\s+\d+ [\d:]+ \d{4})\]")
_RULE = re.compile(r"^(?:local)?rule (\w+):")
_JOBID = re.compile(r"^\s+jobid: (\d+)")
_FINISHED = re.compile(r"^Finished jobid: (\d+)")


def job_seconds(log: str) -> pd.DataFrame:
    """Per rule: number of jobs and summed seconds between each job's start and end stamps in a Snakemake log.

    The stamps have one-second resolution, so a single short job reads as 0-2 s; sums over many jobs are what count.
    """
    stamp = None
    rule = None
    started: dict[str, tuple[str, dt.datetime]] = {}
    seconds: defaultdict[str, float] = defaultdict(float)
    jobs: Counter[str] = Counter()
    for line in log.splitlines():
        if match := _STAMP.match(line):
            stamp = dt.datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif match := _RULE.match(line):
            rule = match.group(1)
        elif (match := _JOBID.match(line)) and rule is not None and stamp is not None:
            started[match.group(1)] = (rule, stamp)
            rule = None
        elif (match := _FINISHED.match(line)) and match.group(1) in started and stamp is not None:
            name, begin = started.pop(match.group(1))
            seconds[name] += (stamp - begin).total_seconds()
            jobs[name] += 1
    table = pd.DataFrame(
        {"rule": list(jobs), "jobs": [jobs[r] for r in jobs], "job_seconds": [seconds[r] for r in jobs]}
    )
    table["seconds_per_job"] = table["job_seconds"] / table["jobs"]
    return table.sort_values(["job_seconds", "rule"], ascending=[False, True]).reset_index(drop=True)


def run_once(
    mode: str, cores: int, snakemake_args: str, workdir: Path, ref: str = "HEAD"
) -> tuple[dict, pd.DataFrame, Path]:
    """One default run in a fresh clone of ``ref``; its summary, its per-rule job seconds and the clone."""
    clone = workdir / mode
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", ref], cwd=clone, check=True)
    snakemake = Path(sys.executable).with_name("snakemake")
    env = dict(os.environ)
    env.pop("KGEVAL_FORKSERVER", None)
    if mode == "cold":
        env["KGEVAL_FORKSERVER"] = "off"
    # other work on the machine stretches the wall time: the load averages before and after go into the summary
    load_before = os.getloadavg()
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(snakemake), "--cores", str(cores), *snakemake_args.split()],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        sys.stderr.write(log[-5000:])
        raise SystemExit(f"snakemake ({mode}) failed with exit status {done.returncode}; clone kept at {clone}")
    table = job_seconds(log)
    summary = {
        "mode": mode,
        "wall_seconds": round(wall, 1),
        "jobs": int(table["jobs"].sum()),
        "job_seconds": float(table["job_seconds"].sum()),
        "user_seconds": round(after.ru_utime - before.ru_utime, 1),
        "system_seconds": round(after.ru_stime - before.ru_stime, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    return summary, table, clone


def compare_results(first: Path, second: Path) -> pd.DataFrame:
    """Every TSV and parquet file under ``first/results`` against ``second/results``: one row per file that differs.

    ``columns`` names the columns whose values differ and ``rows`` the keys of the rows that do (the ``claim`` of a
    claims table, the ``metric`` of a long table, the first column of a two-column key/value table).
    """
    rows = []
    names = sorted({p.relative_to(root).as_posix() for root in (first, second) for pattern in ("*.tsv", "*.parquet")
                    for p in (root / "results").rglob(pattern)})
    for name in names:
        a, b = first / name, second / name
        if not (a.exists() and b.exists()):
            rows.append({"file": name, "status": "missing in one run", "columns": "", "rows": ""})
            continue
        if a.read_bytes() == b.read_bytes():
            continue
        if name.endswith(".parquet"):  # ranks and top-k tables: bytes only (no column of measured seconds)
            rows.append({"file": name, "status": "bytes differ", "columns": "", "rows": ""})
            continue
        left, right = pd.read_csv(a, sep="\t", dtype=str), pd.read_csv(b, sep="\t", dtype=str)
        if left.shape != right.shape or list(left.columns) != list(right.columns):
            rows.append({"file": name, "status": "shape differs", "columns": "", "rows": ""})
            continue
        left, right = left.fillna(""), right.fillna("")
        differ = [c for c in left.columns if not left[c].equals(right[c])]
        # the rows that differ, by their key: a claims table's claim, a long table's metric, a key/value table's key
        key = next((c for c in ("claim", "metric") if c in left.columns), None)
        if key is None and len(left.columns) == 2:
            key = left.columns[0]
        changed = (left[differ] != right[differ]).any(axis=1)
        keys = sorted(set(left.loc[changed, key])) if key is not None and key not in differ else []
        rows.append({"file": name, "status": "values differ", "columns": ",".join(differ), "rows": ",".join(keys)})
    return pd.DataFrame(rows, columns=["file", "status", "columns", "rows"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=["cold", "warm", "baseline"],
        default=["warm"],
        help="runs to make, in this order (baseline: a warm run of --baseline's commit)",
    )
    parser.add_argument("--baseline", help="commit of the baseline mode, measured side by side with HEAD")
    parser.add_argument("--keep", action="store_true", help="keep the clones (and their results/) and print the path")
    parser.add_argument(
        "--snakemake-args", default="", help="extra Snakemake options, e.g. '--max-jobs-per-timespan 100/10s'"
    )
    parser.add_argument("--out", default="default_run", help="name of the output files in benchmarks/results/")
    args = parser.parse_args()
    if ("baseline" in args.modes) != (args.baseline is not None):
        parser.error("--modes baseline and --baseline COMMIT go together")

    workdir = Path(tempfile.mkdtemp(prefix="kgeval-default-run-"))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    summary: dict = {
        "cores": args.cores,
        "snakemake_args": args.snakemake_args,
        "commit": commit.stdout.strip(),
        "baseline_commit": args.baseline,
        **host_columns(),
        "baseline_wall_seconds": BASELINE_WALL_SECONDS,
        "goal_wall_seconds": GOAL_WALL_SECONDS,
        "runs": [],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    clones = []
    for mode in args.modes:
        ref = args.baseline if mode == "baseline" else "HEAD"
        run, table, clone = run_once(mode, args.cores, args.snakemake_args, workdir, ref)
        clones.append(clone)
        summary["runs"].append(run)
        stamp(table).to_csv(OUT / f"{args.out}_{mode}.tsv", sep="\t", index=False, float_format="%.1f")
        print(f"\n{mode}:\n" + table.to_string(index=False, float_format=lambda x: f"{x:.1f}"), flush=True)
        print(json.dumps(run, indent=2), flush=True)
    if len(clones) == 2:
        differences = compare_results(*clones)
        stamp(differences).to_csv(OUT / f"{args.out}_compare.tsv", sep="\t", index=False)
        summary["files_differing"] = len(differences)
        print(f"\nTSV and parquet files that differ between {args.modes[0]} and {args.modes[1]}:")
        print(differences.to_string(index=False) if len(differences) else "none")
    (OUT / f"{args.out}.json").write_text(json.dumps(summary, indent=2) + "\n")
    print()
    for run in summary["runs"]:
        wall = run["wall_seconds"]
        print(
            f"{run['mode']}: wall {wall:.0f} s, {run['user_seconds'] + run['system_seconds']:.0f} s CPU, {run['jobs']} "
            f"jobs; 7af88de {BASELINE_WALL_SECONDS:.0f} s; goal <= {GOAL_WALL_SECONDS:.0f} s: "
            + ("met" if wall <= GOAL_WALL_SECONDS else "not met")
        )
    if len(summary["runs"]) == 2:
        first, second = summary["runs"]
        print(f"{first['mode']} / {second['mode']} wall: {first['wall_seconds'] / second['wall_seconds']:.2f}x")
    if args.keep:
        print(f"clones kept in {workdir}")
    else:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
