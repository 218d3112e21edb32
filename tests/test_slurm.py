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
from workflow_cut import compare_tables, per_job, small_config, text_close

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


def test_text_close():
    """The claims-text comparison accepts last-digit rounding and nothing else."""
    assert text_close("r 0.4831, median 0.6277", "r 0.4832, median 0.6277")
    assert not text_close("r 0.4831", "r 0.4851")
    assert not text_close("holds in 3 of 4 runs", "holds in 2 of 4 runs")
    assert not text_close("tau 0.3333 at depth 1", "tau 0.3333 at depth 2 or")


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
    assert per_job("metrics/nations/transe/0/test.tsv") and per_job("s3/umls_two_view/runs/gcn_align/none/0.2/0/x.tsv")
    assert per_job("s1/testsize/umls_two_view/20/0/metrics.tsv")
    for collated in ("tables/metrics.tsv", "s1/testsize/umls_two_view/metrics.tsv", "claims/s3.tsv",
                     "s3/tables/table2.tsv", "datasets/tiny/summary.tsv"):
        assert not per_job(collated), collated


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
    same, close = compare_tables(test_workflow / "results" / "test", workdir / "results" / "test")
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
