"""Benchmark: seconds per epoch and test MRR of candidate CPU budgets on FB15k-237 and WN18RR (config/real.yaml).

The budgets of ``config/real.yaml`` were picked with this script: for every model entry of a config it trains on each
large dataset for a few epochs, checkpoints the test MRR (filtered, realistic ranks, both sides, with kgeval's ranking
engine) after every ``--every`` epochs, and prints the seconds per epoch, so that the epochs that fit a time budget
and the quality they reach are measured, not guessed. Needs ``../shared/data`` (or ``--data-dir``).

    python benchmarks/real_budgets.py [--config config/real.yaml] [--models transe,complex] \
        [--datasets fb15k237,wn18rr] [--epochs 10] [--every 5] [--test-fraction 0.25]

Writes benchmarks/results/real_budgets.tsv (one row per model, dataset and checkpoint).
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from pykeen.training.callbacks import TrainingCallback

from kgeval.config import model_spec_for, read_yaml
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranking import rank_lp
from kgeval.lp.training import train_model
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]


def _mrr(model, data, fraction: float, seed: int) -> float:
    """Test MRR (filtered, realistic, both sides) on a seeded sample of the test triples."""
    test = data.testing.mapped_triples
    if fraction < 1:
        rows = np.random.default_rng(seed).permutation(len(test))[: max(1, int(len(test) * fraction))]
        test = test[np.sort(rows)]
    was_training = model.training
    with torch.no_grad():
        results = rank_lp(model, test, filter_triples=data.all_mapped_triples(), memory_budget_mb=512)
    model.train(was_training)
    ranks = np.concatenate([results[side].rank_realistic for side in ("head", "tail")])
    return float(np.mean(1.0 / ranks))


class Checkpoints(TrainingCallback):
    """Every ``every`` epochs (and at the last), the sampled test MRR; the time spent ranking is not training time."""

    def __init__(self, data, total: int, every: int, fraction: float, on_row) -> None:
        super().__init__()
        self.data, self.total, self.every, self.fraction, self.on_row = data, total, every, fraction, on_row
        self.start = time.perf_counter()
        self.paused = 0.0

    def post_epoch(self, epoch: int, epoch_loss: float, **kwargs) -> None:  # noqa: D102
        if epoch % self.every and epoch != self.total:
            return
        trained = time.perf_counter() - self.start - self.paused
        begin = time.perf_counter()
        mrr = _mrr(self.model, self.data, self.fraction, seed=0)
        self.paused += time.perf_counter() - begin
        self.on_row(epoch, trained, epoch_loss, mrr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(ROOT / "config" / "real.yaml"))
    parser.add_argument("--models", default=None, help="comma-separated model keys (default: all of the config)")
    parser.add_argument("--datasets", default="fb15k237,wn18rr")
    parser.add_argument("--epochs", type=int, default=None, help="default: the config's num_epochs")
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--test-fraction", type=float, default=0.25, help="share of test triples ranked per checkpoint")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--out", default=str(RESULTS / "real_budgets.tsv"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(int(os.environ.get("KGEVAL_THREADS", "2")))
    config = read_yaml(args.config)
    models = args.models.split(",") if args.models else list(config["models"])
    rows = []
    for dataset in args.datasets.split(","):
        data = load_dataset(dataset, config["datasets"][dataset], args.data_dir)
        for key in models:
            spec = copy.deepcopy(model_spec_for(config, key, dataset))
            spec.setdefault("training_kwargs", {})
            if args.epochs:
                spec["training_kwargs"]["num_epochs"] = args.epochs
            total = int(spec["training_kwargs"].get("num_epochs", 5))

            def on_row(epoch, seconds, loss, mrr, dataset=dataset, key=key):
                row = {
                    "dataset": dataset, "model": key, "epochs": epoch, "train_seconds": round(seconds, 2),
                    "seconds_per_epoch": round(seconds / epoch, 3), "loss": round(float(loss), 5),
                    "test_mrr_sample": round(mrr, 4), "load": round(os.getloadavg()[0], 2),
                }
                rows.append(row)
                print("\t".join(f"{k}={v}" for k, v in row.items()), flush=True)

            checkpoints = Checkpoints(data, total, args.every, args.test_fraction, on_row)
            train_model(data, spec, seed=0, callbacks=[checkpoints])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp(pd.DataFrame(rows)).to_csv(out, sep="\t", index=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
