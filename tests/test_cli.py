"""Tests of the ``kgeval`` command line, in particular ``kgeval adjust`` against the expectations table."""

from __future__ import annotations

import itertools
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgeval.cli import SUBCOMMAND_MODULES, build_parser, main
from kgeval.io import write_tsv
from kgeval.metrics import METRICS, expectations_table


def _ranks() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    nc = np.array([2, 11, 3, 4, 13, 5] * 5)
    r = rng.integers(1, nc + 1).astype(float)
    return pd.DataFrame(
        {"side": ["head", "tail"] * 15, "num_candidates": nc}
        | {f"rank_{t}": r for t in ("optimistic", "realistic", "pessimistic", "nondeterministic")}
    )


@pytest.fixture()
def table(tmp_path) -> Path:
    ranks = _ranks()
    frames = [
        expectations_table(ranks, "toy", "test", num_samples=50),
        expectations_table(ranks.iloc[:10], "other", "valid", metrics=["mr", "mrr"], num_samples=50),
    ]
    path = tmp_path / "expectations.tsv"
    write_tsv(pd.concat(frames), path, sort_by=["dataset", "split", "side", "metric"])
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _parse(out: str) -> dict[str, float]:
    return {line.split("\t")[0]: float(line.split("\t")[1]) for line in out.splitlines() if not line.startswith("#")}


def _exact_moments(transform, nc: np.ndarray) -> tuple[float, float]:
    """E and V of mean(transform(r_i)) with r_i uniform on 1..N_i, by summation over each task."""
    e = np.mean([np.mean(transform(np.arange(1, c + 1, dtype=float))) for c in nc])
    v = np.sum([np.var(transform(np.arange(1, c + 1, dtype=float))) for c in nc]) / len(nc) ** 2
    return float(e), float(v)


@pytest.mark.parametrize("metric", ["mr", "mrr", "hits@1", "hits@10", "gmr"])
def test_adjust_matches_pykeen_and_definitions(capsys, table, metric):
    """Adjusting the value of a base metric gives what PyKEEN's derived metrics give on the same ranks."""
    ranks = _ranks()
    r, nc = ranks["rank_realistic"].to_numpy(), ranks["num_candidates"].to_numpy()
    value = METRICS[metric].instantiate()(ranks=r, num_candidates=nc)
    code, out, err = _run(
        capsys, "adjust", "--dataset", "toy", "--metric", metric, "--value", repr(value), "--table", str(table)
    )
    assert code == 0, err
    got = _parse(out)
    assert got[metric] == pytest.approx(value)
    derived = [k for k, s in METRICS.items() if s.base == metric]
    assert derived and set(derived) <= set(got)
    for key in derived:
        expected = METRICS[key].instantiate()(ranks=r, num_candidates=nc)
        assert got[key] == pytest.approx(expected, rel=1e-8, abs=1e-9), key
    # and against the definitions, with moments summed by hand
    if metric in ("mr", "mrr") or metric.startswith("hits@"):
        transform = {"mr": lambda x: x, "mrr": lambda x: 1 / x}.get(metric) or (
            lambda x, k=int(metric.split("@")[1]): (x <= k).astype(float)
        )
        e, v = _exact_moments(transform, nc)
        sign = -1.0 if metric == "mr" else 1.0
        z_key = {"mr": "zmr", "mrr": "zmrr"}.get(metric, "z" + metric.replace("hits", "h"))
        assert got[z_key] == pytest.approx(sign * (value - e) / math.sqrt(v), rel=1e-8)
        if metric == "mr":
            assert got["amri"] == pytest.approx(1 - (value - 1) / (e - 1), rel=1e-8)
            assert got["amr"] == pytest.approx(value / e, rel=1e-8)


def test_adjust_tiny_set_by_enumeration(capsys, tmp_path):
    """On 3 tasks with 2, 3 and 4 candidates, E and V from enumerating all 24 rank vectors drive the adjustment."""
    nc = np.array([2, 3, 4])
    vectors = np.array(list(itertools.product(*(range(1, c + 1) for c in nc))), dtype=float)
    mrr = (1 / vectors).mean(axis=1)
    e, v = mrr.mean(), mrr.var()
    ranks = pd.DataFrame(
        {"side": "head", "num_candidates": nc}
        | {f"rank_{t}": [1.0, 2.0, 4.0] for t in ("optimistic", "realistic", "pessimistic", "nondeterministic")}
    )
    path = tmp_path / "e.tsv"
    write_tsv(expectations_table(ranks, "tiny", "test", metrics=["mrr"]), path)
    value = float(np.mean([1.0, 0.5, 0.25]))
    code, out, _ = _run(
        capsys,
        "adjust",
        "--dataset",
        "tiny",
        "--metric",
        "mrr",
        "--value",
        str(value),
        "--side",
        "head",
        "--table",
        str(path),
    )
    assert code == 0
    got = _parse(out)
    assert got["amrr"] == pytest.approx((value - e) / (1 - e), rel=1e-8)
    assert got["zmrr"] == pytest.approx((value - e) / math.sqrt(v), rel=1e-8)


def test_adjust_errors_list_known_names(capsys, table):
    code, _, err = _run(
        capsys, "adjust", "--dataset", "fb15k237", "--metric", "mrr", "--value", "0.3", "--table", str(table)
    )
    assert code == 2 and "unknown dataset 'fb15k237'" in err and "other, toy" in err
    code, _, err = _run(
        capsys, "adjust", "--dataset", "toy", "--metric", "mmr", "--value", "0.3", "--table", str(table)
    )
    assert code == 2 and "unknown metric 'mmr'" in err and "mrr" in err and "hits@10" in err
    code, _, err = _run(
        capsys, "adjust", "--dataset", "toy", "--metric", "amrr", "--value", "0.3", "--table", str(table)
    )
    assert code == 2 and "pass --metric mrr" in err
    code, _, err = _run(
        capsys,
        "adjust",
        "--dataset",
        "other",
        "--split",
        "test",
        "--metric",
        "mrr",
        "--value",
        "0.3",
        "--table",
        str(table),
    )
    assert code == 2 and "unknown split 'test'" in err and "valid" in err
    code, _, err = _run(
        capsys,
        "adjust",
        "--dataset",
        "toy",
        "--metric",
        "mrr",
        "--value",
        "0.3",
        "--table",
        str(table.parent / "nope.tsv"),
    )
    assert code == 2 and "not found" in err


def test_cli_help_and_registry(capsys):
    assert main([]) == 2
    assert "adjust" in capsys.readouterr().err
    parser = build_parser()
    assert "kgeval.studies.s2.adjust" in SUBCOMMAND_MODULES
    with pytest.raises(SystemExit):
        parser.parse_args(["--version"])


@pytest.mark.slow
def test_console_script(table):
    """The installed entry point ``kgeval`` runs the same code."""
    exe = shutil.which("kgeval", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the kgeval console script is not installed in this environment (pip install -e .)")
    proc = subprocess.run(
        [exe, "adjust", "--dataset", "toy", "--metric", "mrr", "--value", "0.5", "--table", str(table)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "amrr\t" in proc.stdout and "zmrr\t" in proc.stdout
