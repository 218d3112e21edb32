"""Benchmark: seconds per training epoch of the real tier's models, this tree against a git revision, side by side.

``train_model`` is the real tier's largest rule (35 % of its job-seconds on a 2-core Intel Xeon,
``real_tier_jobs.tsv``). This script trains each model of ``config/real.yaml`` on one dataset for ``--epochs``
epochs with that model's settings (its overrides for the dataset merged in), once with this tree's ``src/`` and
once with the ``src/`` of ``--baseline`` (extracted with ``git archive``), alternating, each run in a fresh
interpreter on ``--threads`` threads (``train_model`` has one in the workflow). Each pair's trained parameters must
be bit-equal: a change of the training step's speed must not change a number. It reports each side's training
seconds (``TrainResult.seconds``, the loop alone) and their ratio, the median of the pairs. Each side imports its
compiled kernels before it trains, so that neither counts their one-time loading (about 0.4 s).

    python benchmarks/train_epochs.py --baseline 0622ac6 [--dataset fb15k237] [--models transe,distmult] \
        [--epochs 1] [--repeats 2] [--threads 1] [--data-dir ../shared/data]

Appends to benchmarks/results/train_epochs.tsv (``--out``).
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
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from kgeval.io import read_tsv, write_tsv
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]

#: run in a fresh interpreter: train one model, save its parameters, print the seconds
CHILD = r"""
import importlib, json, sys, torch
from kgeval.config import model_spec_for, read_yaml
for kernels in ("kgeval.lp.engine.rownorm_kernel", "kgeval.lp.engine.training.embedding_gradients_kernel", "kgeval.lp.engine.training.transe_l1_kernel",
                "kgeval.lp.engine.training.complex_interaction_kernel"):
    try:  # loaded before the clock, on both sides (before aaff110, train_model's seconds included this loading)
        importlib.import_module(kernels)
    except ModuleNotFoundError:
        pass
from kgeval.lp.datasets import load_dataset
from kgeval.lp.training import train_model
config_path, dataset, model, epochs, data_dir, threads, out = sys.argv[1:8]
torch.set_num_threads(int(threads))
config = read_yaml(config_path)
spec = model_spec_for(config, model, dataset)
spec["training_kwargs"] = {**(spec.get("training_kwargs") or {}), "num_epochs": int(epochs)}
data = load_dataset(dataset, config["datasets"][dataset], data_dir)
result = train_model(data, spec, int(config.get("seeds", [0])[0]))
torch.save({k: v.detach().clone() for k, v in result.model.state_dict().items()}, out)
print(json.dumps({"seconds": result.seconds}))
"""


def extract(revision: str, into: Path) -> Path:
    """``src/`` (and ``workflow/``, where the config schema lies) of a git revision, extracted into ``into``; returns the
    path of its ``src/``."""
    archive = into / "src.tar"
    with archive.open("wb") as handle:
        subprocess.run(["git", "archive", revision, "src", "workflow"], cwd=ROOT, stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def train(src: Path, model: str, args: argparse.Namespace, out: Path) -> float:
    """Train one model with the kgeval of ``src`` in a fresh interpreter; its training seconds."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": str(args.threads)}
    command = [sys.executable, "-c", CHILD, str(args.config), args.dataset, model, str(args.epochs), str(args.data_dir),
               str(args.threads), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{model} with {src} failed:\n{done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def same_parameters(a: Path, b: Path) -> bool:
    """Whether two saved state dicts hold the same tensors, bit for bit."""
    import torch

    left, right = torch.load(a), torch.load(b)
    return left.keys() == right.keys() and all(torch.equal(left[k].view(-1).view(torch.uint8), right[k].view(-1).view(torch.uint8)) for k in left)


def paired_columns(
    run: Callable[[Path, Path], float],
    baseline_src: Path,
    scratch: Path,
    repeats: int,
    same: Callable[[Path, Path], bool],
    what: str,
) -> dict[str, object]:
    """``repeats`` rounds of ``run(src, out)`` with this tree's ``src/`` then the baseline's, each round's outputs
    checked with ``same``: each side's median seconds and the median of the rounds' ratios (this tree over baseline).

    :param what: the outputs compared, for the error (e.g. ``"transe: the trained parameters"``)
    :raises AssertionError: where a round's outputs differ
    """
    seconds: dict[str, list[float]] = {"now": [], "baseline": []}
    for _ in range(repeats):
        for side, src in (("now", ROOT / "src"), ("baseline", baseline_src)):
            seconds[side].append(run(src, scratch / f"{side}.pt"))
        if not same(scratch / "now.pt", scratch / "baseline.pt"):
            raise AssertionError(f"{what} differ from the baseline's")
    return {
        "baseline_seconds": round(statistics.median(seconds["baseline"]), 3),
        "seconds": round(statistics.median(seconds["now"]), 3),
        "ratio": round(statistics.median(n / b for n, b in zip(seconds["now"], seconds["baseline"])), 4),
        "identical": True,
    }


def side_by_side(
    args: argparse.Namespace,
    measure: Callable[[str, Path, Path, argparse.Namespace], dict[str, object]],
    prefix: str,
    sort_by: list[str],
) -> None:
    """``measure`` each of ``args.models`` against ``args.baseline``'s extracted ``src/`` and append the stamped rows
    to ``args.out``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        baseline_src = extract(args.baseline, Path(scratch))
        rows = [measure(model, baseline_src, Path(scratch), args) for model in args.models.split(",")]
    table = stamp(pd.DataFrame(rows))
    if args.out.exists():
        table = pd.concat([read_tsv(args.out), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=sort_by)


def measure(model: str, baseline_src: Path, scratch: Path, args: argparse.Namespace) -> dict[str, object]:
    """Paired runs of one model; raises if the trained parameters differ."""
    row = {
        "dataset": args.dataset, "model": model, "epochs": args.epochs, "threads": args.threads,
        "repeats": args.repeats, "baseline": args.baseline,
        **paired_columns(lambda src, out: train(src, model, args, out), baseline_src, scratch, args.repeats,
                         same_parameters, f"{model}: the trained parameters"),
    }
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", required=True, help="a git revision whose src/ trains side by side")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "real.yaml")
    parser.add_argument("--dataset", default="fb15k237")
    parser.add_argument("--models", default="transe,distmult,complex,rotate,quate,hole")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=RESULTS / "train_epochs.tsv")
    args = parser.parse_args()
    side_by_side(args, measure, "kgeval-train-epochs-", ["date", "commit", "dataset", "threads", "model"])

if __name__ == "__main__":
    main()
