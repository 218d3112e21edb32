"""Benchmark: wall time of the whole default run (``snakemake --cores N`` on config/config.yaml), with job time per rule.

The run happens in a fresh clone of this repository's HEAD (so no result of an earlier run is reused) and uses this
checkout's Python environment. Snakemake's own log gives each job's start and end; the script sums them per rule,
which shows where the time goes (training, ranking, and the start-up cost that every job, a fresh Python process,
pays).

    python benchmarks/default_run.py [--cores 2] [--keep] [--snakemake-args "..."] [--out NAME]

Writes benchmarks/out/default_run.tsv (one row per rule: jobs, job seconds, mean seconds per job) and
benchmarks/out/default_run.json (wall time, job count, total job seconds, CPU times).
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

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "out"

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the clone (and its results/) and print its path")
    parser.add_argument(
        "--snakemake-args", default="", help="extra Snakemake options, e.g. '--max-jobs-per-timespan 100/10s'"
    )
    parser.add_argument("--out", default="default_run", help="name of the output files in benchmarks/out/")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="kgeval-default-run-"))
    clone = workdir / "kgeval"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    snakemake = Path(sys.executable).with_name("snakemake")
    # other work on the machine stretches the wall time: the load averages before and after go into the summary
    load_before = os.getloadavg()
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(snakemake), "--cores", str(args.cores), *args.snakemake_args.split()], cwd=clone, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        sys.stderr.write(log[-5000:])
        raise SystemExit(f"snakemake failed with exit status {done.returncode}; clone kept at {clone}")

    table = job_seconds(log)
    summary = {
        "cores": args.cores,
        "snakemake_args": args.snakemake_args,
        "wall_seconds": round(wall, 1),
        "jobs": int(table["jobs"].sum()),
        "job_seconds": float(table["job_seconds"].sum()),
        "user_seconds": round(after.ru_utime - before.ru_utime, 1),
        "system_seconds": round(after.ru_stime - before.ru_stime, 1),
        "commit": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
        ).stdout.strip(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "baseline_wall_seconds": BASELINE_WALL_SECONDS,
        "goal_wall_seconds": GOAL_WALL_SECONDS,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"{args.out}.tsv", sep="\t", index=False, float_format="%.1f")
    (OUT / f"{args.out}.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(json.dumps(summary, indent=2))
    print(
        f"wall {wall:.0f} s; 7af88de {BASELINE_WALL_SECONDS:.0f} s; goal <= {GOAL_WALL_SECONDS:.0f} s: "
        + ("met" if wall <= GOAL_WALL_SECONDS else "not met")
    )
    if args.keep:
        print(f"clone kept at {clone}")
    else:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
