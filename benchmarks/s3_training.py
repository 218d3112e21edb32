"""Benchmark: seconds to train S3's methods, this tree against a git revision, side by side, with bit-equal embeddings.

``evaluate_s3_model`` and ``evaluate_s3_strength`` hold about a third of the real tier's job-seconds
(``real_tier_jobs.tsv``), nearly all of it training. This script trains each ``--models`` method of
``config/real.yaml`` (``studies.s3.<method>``, merged as the workflow merges it) on one pair with a seeded random
``--ratio`` of its reference mappings as seeds and ``--valid`` of the rest for early stopping, once with this tree's
``src/`` and once with the ``src/`` of ``--baseline`` (extracted with ``git archive``), alternating, each run in a
fresh interpreter on one torch thread (the workflow's jobs have one). Each pair's embeddings must be bit-equal: a
change of speed must not change a number. It reports each side's median ``train_seconds`` and the median of the
paired ratios.

    python benchmarks/s3_training.py --baseline abc7a78 [--models bootea,rsn4ea] [--repeats 2] \
        [--pair dbp15k_fr_en] [--data-dir ../shared/data]

Appends to benchmarks/results/s3_training.tsv (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from host import RESULTS  # noqa: E402  (benchmarks/host.py: where results go)
from train_epochs import paired_columns, side_by_side  # noqa: E402  (alternating rounds against a revision)

ROOT = Path(__file__).resolve().parents[1]

#: run in a fresh interpreter: train one method on one seeded split, save both graphs' embeddings, print the seconds
CHILD = r"""
import json, sys, numpy as np, torch
from kgeval.config import load_config
from kgeval.studies.s3.jobs import load_pair_for
from kgeval.studies.s3.models import fit_scorer
config_path, pair_key, model, ratio, valid, data_dir, out = sys.argv[1:8]
torch.set_num_threads(1)
config = load_config(config_path)
s3 = config["studies"]["s3"]
spec = {"gcn_align": {**config["ea_models"].get("gcn_align", {}), **s3.get("gcn_align", {})},
        "rdgcn": {**s3.get("rdgcn", {}), "name_vectors": s3["name_vectors"]},
        "multike": {**s3.get("multike", {}), "name_vectors": s3["name_vectors"]}}.get(model, dict(s3.get(model, {})))
s3pair = load_pair_for(pair_key, config["ea_datasets"][pair_key], s3["datasets"].get(pair_key), data_dir)
mappings = np.random.default_rng(0).permutation(s3pair.pair.alignment)
num_train = int(round(float(ratio) * len(mappings)))
train, valid = mappings[:num_train], mappings[num_train : num_train + int(round(float(valid) * len(mappings)))]
scorer, info = fit_scorer(model, s3pair, train, spec, 0, device="cpu", valid_pairs=valid)
torch.save({"left": scorer.left, "right": scorer.right}, out)
print(json.dumps({"seconds": info["train_seconds"]}))
"""


def train(src: Path, model: str, args: argparse.Namespace, out: Path) -> float:
    """Train one method with the kgeval of ``src`` in a fresh interpreter; its ``train_seconds``."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-c", CHILD, str(args.config), args.pair, model, str(args.ratio), str(args.valid),
               str(args.data_dir), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{model} with {src} failed:\n{done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def same_embeddings(a: Path, b: Path) -> bool:
    """Whether two saved embedding pairs are equal, bit for bit."""
    import torch

    left, right = torch.load(a), torch.load(b)
    return all(torch.equal(left[k].contiguous().view(torch.int32), right[k].contiguous().view(torch.int32))
               for k in ("left", "right"))


def measure(model: str, baseline_src: Path, scratch: Path, args: argparse.Namespace) -> dict[str, object]:
    """Paired runs of one method; raises if the embeddings differ."""
    row = {
        "pair": args.pair, "model": model, "seed_share": args.ratio, "valid_share": args.valid, "threads": 1,
        "repeats": args.repeats, "baseline": args.baseline,
        **paired_columns(lambda src, out: train(src, model, args, out), baseline_src, scratch, args.repeats,
                         same_embeddings, f"{model}: the embeddings"),
    }
    print(row, flush=True)
    return row


def main() -> None:
    """Parse the arguments, measure every method, append the rows."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", required=True, help="a git revision whose src/ trains side by side")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "real.yaml")
    parser.add_argument("--pair", default="dbp15k_fr_en")
    parser.add_argument("--models", default="bootea,rsn4ea,gcn_align,rdgcn,multike")
    parser.add_argument("--ratio", type=float, default=0.2, help="share of the reference mappings used as seeds")
    parser.add_argument("--valid", type=float, default=0.1, help="share used for early stopping")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=RESULTS / "s3_training.tsv")
    args = parser.parse_args()
    side_by_side(args, measure, "kgeval-s3-training-", ["date", "commit", "pair", "model"])

if __name__ == "__main__":
    main()
