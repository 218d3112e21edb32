"""The SLURM profiles for real: a one-dataset cut of config/test.yaml (every rule kind, 68 jobs instead of 106)
through snakemake-executor-plugin-slurm on a one-node SLURM cluster.

The cluster (tests/slurm.py) is started on this machine as root; where that is not possible (not root, no
``slurm-wlm``/``munge``, daemons that do not come up) the tests that need it are skipped with the reason. The check of
the GPU profile's sbatch arguments runs everywhere (it records what the plugin would submit), and on the cluster the
recorded submissions are also handed to ``sbatch --test-only``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import copy_workflow, run_snakemake
from slurm import GPU_PARTITION, PARTITION, LocalSlurm, SlurmUnavailable, missing_requirements

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def slurm_overrides(cpus: int) -> list[str]:
    """What a run on the test cluster adds to workflow/profiles/slurm, each for a reason of the test cluster:

    - ``--slurm-status-command squeue``: no slurmdbd, so ``sacct`` has no database ("Slurm accounting storage is
      disabled"); ``squeue`` sees finished jobs for ``MinJobAge`` (600 s) seconds;
    - ``--max-threads``: the profile gives training and ranking 4 threads, which a smaller node cannot offer;
    - ``--slurm-init-seconds-before-status-checks 1``: jobs of the tiny config take seconds, the default waits 40 s.
      The plugin (2.8.0) waits this long after a status check that saw a job finish and 10 s longer after each one
      that saw none (up to 180 s; neither step is a setting), so a job of a few seconds is seen after init + (init +
      10) s: 1 s, the least it accepts, is the shortest such wait; Snakemake's ``--seconds-between-status-checks``
      only sets the first wait, before any job is submitted.
    """
    return [
        "--slurm-status-command", "squeue",
        "--max-threads", str(cpus),
        "--slurm-init-seconds-before-status-checks", "1",
    ]


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running one-node SLURM cluster (skipped with the reason where it cannot be started)."""
    reason = missing_requirements()
    if reason:
        pytest.skip(f"no test SLURM cluster: {reason}")
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except (SlurmUnavailable, subprocess.SubprocessError, OSError) as error:
        cluster.stop()
        pytest.skip(f"no test SLURM cluster: {error}")
    yield cluster
    cluster.stop()


#: measured times are no results: tables of them are left out, columns (``*seconds*``) and rows (S5's ``t_*``,
#: ``pct_delta_t*`` metrics, and the claims built from them, ``s5.t_*``) of them dropped
TIMING_TABLES = ("table1_timing.tsv", "table1_timing_paper.tsv", "fig4_timing.tsv")
TIMING_COLUMNS = r"seconds"
TIMING_METRICS = r"^(t_|pct_delta_t)"
TIMING_CLAIMS = r"^s\d+\.t_"


def _tables(results: Path) -> dict[str, Path]:
    return {
        str(path.relative_to(results)): path
        for path in sorted(results.rglob("*.tsv"))
        if "logs" not in path.parts and "benchmarks" not in path.parts and path.name not in TIMING_TABLES
    }


def _without_timings(table):
    table = table.drop(columns=[c for c in table.columns if re.search(TIMING_COLUMNS, c)])
    if "metric" in table.columns:
        table = table[~table.metric.astype(str).str.match(TIMING_METRICS)]
    if "claim" in table.columns:
        table = table[~table.claim.astype(str).str.match(TIMING_CLAIMS)]
    return table.reset_index(drop=True)


_NUMBER = re.compile(r"[-+]?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?")


def _text_close(a: str, b: str) -> bool:
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


def _per_job(name: str) -> bool:
    """Whether a table is one job's output that the cut shares with the full config (module doc of SMALL_CUT).

    S1's test-size tables directly under ``s1/testsize/<pair>/`` collate the sweep's runs, so they are left out."""
    parts = Path(name).parts
    collated_sweep = parts[:2] == ("s1", "testsize") and len(parts) == 4
    return any(part in SHARED_JOB_PARTS for part in parts) and not collated_sweep


def _compare(local: Path, slurm: Path) -> tuple[list[str], list[str]]:
    """Compare every per-job table the SLURM run of the cut wrote (:func:`_per_job`) with the local run's:
    (byte-equal tables, tables equal as numbers within 1e-6 relative). Every table of the SLURM run must exist in the
    local run too (the cut writes no table the full config does not).

    A table differs only in the last digits where a trained model's float sums ran on another number of threads (one
    locally, ``--max-threads`` under the profile); anything else fails. Text cells with numbers in them (the claims
    tables' ``kgeval`` column, rounded to four decimals) may differ by one unit in their last printed digit.
    """
    import pandas as pd

    same, close = [], []
    local_tables, slurm_tables = _tables(local), _tables(slurm)
    assert set(slurm_tables) <= set(local_tables), sorted(set(slurm_tables) - set(local_tables))
    for name, other in slurm_tables.items():
        if not _per_job(name):
            continue
        path = local_tables[name]
        if path.read_bytes() == other.read_bytes():
            same.append(name)
            continue
        a, b = pd.read_csv(path, sep="\t"), pd.read_csv(other, sep="\t")
        a, b = _without_timings(a), _without_timings(b)
        assert list(a.columns) == list(b.columns) and len(a) == len(b), f"{name}: shapes differ"
        numeric = pd.api.types.is_numeric_dtype
        text = [c for c in a.columns if not (numeric(a[c]) and numeric(b[c]))]
        for column in text:
            for row, (x, y) in enumerate(zip(map(str, a[column].tolist()), map(str, b[column].tolist()))):
                assert _text_close(x, y), f"{name}, row {row}, column {column}: {x!r} (local) vs {y!r} (SLURM)"
        numbers = [c for c in a.columns if c not in text]
        pd.testing.assert_frame_equal(a[numbers], b[numbers], check_exact=False, rtol=1e-6, atol=1e-9, obj=name)
        close.append(name)
    return same, close


def test_text_close():
    """The claims-text comparison accepts last-digit rounding and nothing else."""
    assert _text_close("r 0.4831, median 0.6277", "r 0.4832, median 0.6277")
    assert not _text_close("r 0.4831", "r 0.4851")
    assert not _text_close("holds in 3 of 4 runs", "holds in 2 of 4 runs")
    assert not _text_close("tau 0.3333 at depth 1", "tau 0.3333 at depth 2 or")


def _planned_rules(workdir: Path, configfile: str) -> dict[str, int]:
    """Jobs per rule of a dry run of the whole workflow with ``configfile``."""
    proc = run_snakemake(workdir, "--dry-run", "--quiet", "rules", "--configfile", configfile, timeout=600)
    rows = re.findall(r"^([a-z_0-9]+)\s+(\d+)$", proc.stdout, re.MULTILINE)
    return {rule: int(count) for rule, count in rows}


def test_the_cut_plans_every_rule_of_the_test_config(tmp_path):
    """The SLURM test's cut of config/test.yaml has a job for every rule the full config has, and fewer jobs; the
    per-job filter keeps one dataset's and one pair's tables and leaves out every collated one."""
    workdir = copy_workflow(tmp_path / "workflow")
    full, cut = _planned_rules(workdir, "config/test.yaml"), _planned_rules(workdir, small_config(workdir))
    assert set(cut) == set(full) and len(full) > 50
    assert cut["total"] < 0.7 * full["total"], (cut["total"], full["total"])
    assert _per_job("metrics/nations/transe/0/test.tsv") and _per_job("s3/umls_two_view/runs/gcn_align/none/0.2/0/x.tsv")
    assert _per_job("s1/testsize/umls_two_view/20/0/metrics.tsv")
    for collated in ("tables/metrics.tsv", "s1/testsize/umls_two_view/metrics.tsv", "claims/s3.tsv",
                     "s3/tables/table2.tsv", "datasets/tiny/summary.tsv"):
        assert not _per_job(collated), collated


def test_test_config_runs_on_slurm(slurm_cluster, tmp_path, request):
    """The one-dataset cut of config/test.yaml (:func:`small_config`: every rule kind) end to end through
    workflow/profiles/slurm; its per-job tables equal those of the local run of config/test.yaml.

    The local run (the session's ``test_workflow``) is asked for only after the SLURM run: under pytest-xdist the
    other worker runs it meanwhile, while this one mostly waits for SLURM.
    """
    workdir = copy_workflow(tmp_path / "workflow")
    cmd = [
        sys.executable, "-m", "snakemake", "--workflow-profile", "workflow/profiles/slurm",
        *slurm_overrides(slurm_cluster.cpus), "--configfile", small_config(workdir),
    ]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=workdir, env=slurm_cluster.env, capture_output=True, text=True, timeout=5400)
    wall = time.monotonic() - start
    jobs = slurm_cluster.finished_jobs()
    print(f"SLURM run of the cut of config/test.yaml: {wall:.0f} s wall, {len(jobs)} SLURM jobs")
    print(slurm_cluster.squeue())
    for job in jobs:
        print(" ".join(f"{k}={job.get(k, '')}" for k in ("JobId", "JobState", "Partition", "NodeList", "ProcCnt",
                                                          "StartTime", "EndTime", "ExitCode")))
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    console = proc.stdout + proc.stderr
    assert "has been submitted with SLURM jobid" in console
    # every job ran as a SLURM job of the profile's partition, and none failed
    assert jobs and all(job["JobState"] == "COMPLETED" and job["Partition"] == PARTITION for job in jobs), jobs
    assert len(jobs) == console.count("has been submitted with SLURM jobid")
    test_workflow = request.getfixturevalue("test_workflow")
    same, close = _compare(test_workflow / "results" / "test", workdir / "results" / "test")
    print(f"byte-equal tables ({len(same)}): {same}")
    print(f"equal within rtol 1e-6 ({len(close)}): {close}")
    # tables that no trained model touches are byte-equal (S2 needs three datasets: config/test.yaml skips it, and
    # tests/studies/test_s2_workflow.py runs it)
    for name in ("datasets/nations/summary.tsv", "datasets/nations/expectations.tsv", "s3/umls_two_view/features.tsv"):
        assert name in same
    # every kind of per-job table was compared: a dataset's, a model's, S3's, S4's and S5's
    compared = same + close
    for prefix in ("datasets/nations/", "metrics/nations/", "s3/umls_two_view/runs/", "s4/nations/", "s5/nations/"):
        assert any(name.startswith(prefix) for name in compared), prefix
    # the collated tables were written too (their rows are the cut's only)
    for name in ("tables/metrics.tsv", "claims/s3.tsv", "s5/tables/assessment.tsv"):
        assert (workdir / "results" / "test" / name).is_file(), name


# --- the GPU profile: what the plugin submits -----------------------------------------------------------------------

SHIMMED = ("sacct", "squeue", "sinfo", "scontrol", "scancel", "sacctmgr", "sshare")


@pytest.fixture(scope="module")
def gpu_profile_submissions(tmp_path_factory) -> list[list[str]]:
    """The sbatch arguments the plugin builds with workflow/profiles/slurm-gpu for a GPU rule (train_model) and a CPU
    rule (summarize_dataset), recorded by a stand-in ``sbatch`` that then fails (so nothing runs)."""
    root = tmp_path_factory.mktemp("gpu_profile")
    workdir = copy_workflow(root / "workflow")
    shims = root / "bin"
    shims.mkdir()
    record = root / "sbatch_calls.jsonl"
    (shims / "sbatch").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "print('sbatch: stand-in of tests/test_slurm.py, nothing submitted', file=sys.stderr)\nsys.exit(1)\n"
    )
    for name in SHIMMED:
        (shims / name).write_text("#!/bin/sh\nexit 1\n")
    for path in shims.iterdir():
        path.chmod(0o755)
    # train_model's input exists, so that both jobs are submitted at once
    summary = workdir / "results" / "test" / "datasets" / "tiny" / "summary.tsv"
    summary.parent.mkdir(parents=True)
    summary.write_text("split\tnum_triples\n")
    import os

    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    env.pop("SLURM_CONF", None)
    cmd = [
        sys.executable, "-m", "snakemake", "results/test/models/tiny/transe/0/model.pt",
        "results/test/datasets/nations/summary.tsv", "--workflow-profile", "workflow/profiles/slurm-gpu",
        "--retries", "0", "--configfile", "config/test.yaml",
    ]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    assert record.exists(), f"the plugin called no sbatch:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return [json.loads(line) for line in record.read_text().splitlines()]


def _submission(calls: list[list[str]], rule: str) -> list[str]:
    found = [args for args in calls if any(a == f"rule_{rule}" or a.startswith(f"rule_{rule}_") for a in args)]
    assert len(found) == 1, f"{rule}: {len(found)} submissions in {calls}"
    return found[0]


def _value(args: list[str], option: str) -> str:
    return args[args.index(option) + 1]


def test_gpu_profile_sbatch_arguments(gpu_profile_submissions):
    """A GPU rule asks for one GPU (--gpus=1, no --gres beside it) on the GPU partition; a CPU rule for none."""
    gpu = _submission(gpu_profile_submissions, "train_model")
    assert "--gpus=1" in gpu
    assert not [a for a in gpu if a.startswith("--gres")], gpu
    assert _value(gpu, "-p") == GPU_PARTITION and _value(gpu, "--mem") == "32000"
    assert "--cpus-per-task=4" in gpu
    cpu = _submission(gpu_profile_submissions, "summarize_dataset")
    assert not [a for a in cpu if a.startswith(("--gpus", "--gres"))], cpu
    assert _value(cpu, "-p") == PARTITION and "--ntasks=1" in cpu and "--cpus-per-task=1" in cpu


def test_gpu_profile_submissions_accepted_by_slurm(gpu_profile_submissions, slurm_cluster):
    """sbatch --test-only accepts both submissions on the test cluster (its gpu partition has one GPU)."""
    memory = int(slurm_cluster.hardware["RealMemory"])
    for args in gpu_profile_submissions:
        args = [a for a in args if a != "--parsable" and not a.startswith("--wrap")]
        # the profile asks 32 GB for GPU jobs; a smaller test node offers what it has
        mem = args.index("--mem") + 1
        args[mem] = str(min(int(args[mem]), memory))
        # at most the node's cores
        args = [f"--cpus-per-task={min(int(a.split('=')[1]), slurm_cluster.cpus)}"
                if a.startswith("--cpus-per-task=") else a for a in args]
        proc = subprocess.run(["sbatch", "--test-only", *args, "--wrap=true"], capture_output=True, text=True,
                              env=slurm_cluster.env, timeout=60)
        assert proc.returncode == 0 and "to start at" in proc.stderr, (args, proc.stderr)
