"""Benchmark: loading a link-prediction dataset from its files against reading it from kgeval's dataset cache.

The real tier loads FB15k-237 in 29 jobs and WN18RR in 21 (``kgeval.lp.dataset_cache``). Each round loads each dataset
in a fresh interpreter twice: with the cache off (``KGEVAL_CACHE_DIR=off``: reading the three files and PyKEEN's
label mapping) and from a cache entry written before the rounds; both loads' id triples and label maps must be equal.
It reports each side's median seconds (the load alone, after the imports) and the median of the rounds' ratios.

    python benchmarks/dataset_cache.py [--datasets fb15k237,wn18rr] [--repeats 3] [--data-dir ../shared/data]

Appends to benchmarks/results/dataset_cache.tsv (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)

ROOT = Path(__file__).resolve().parents[1]

#: one load in a fresh interpreter: its seconds and a digest of what it built
_LOAD = """
import hashlib, json, sys, time
from kgeval.config import load_config
from kgeval.lp.datasets import load_dataset
key, config, data_dir = sys.argv[1:4]
spec = load_config(config)["datasets"][key]
start = time.perf_counter()
data = load_dataset(key, spec, data_dir)
seconds = time.perf_counter() - start
digest = hashlib.sha256()
for split in ("train", "valid", "test"):
    digest.update(data.factory(split).mapped_triples.numpy().tobytes())
digest.update(json.dumps(sorted(data.training.entity_to_id.items())).encode())
digest.update(json.dumps(sorted(data.training.relation_to_id.items())).encode())
digest.update(json.dumps(data.num_dropped, sort_keys=True).encode())
print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))
"""


def load_once(key: str, args: argparse.Namespace, cache: str) -> dict:
    """One load of ``key`` in a fresh interpreter with ``KGEVAL_CACHE_DIR=cache``."""
    env = dict(os.environ, KGEVAL_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    command = [sys.executable, "-c", _LOAD, key, str(args.config), str(args.data_dir)]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(key: str, args: argparse.Namespace, cache: str) -> dict[str, object]:
    """``args.repeats`` paired rounds of a load without and with the cache (the entry written first)."""
    load_once(key, args, cache)
    rounds = [(load_once(key, args, "off"), load_once(key, args, cache)) for _ in range(args.repeats)]
    digests = {load["digest"] for pair in rounds for load in pair}
    assert len(digests) == 1, f"{key}: the cached load differs from the fresh one"
    files, cached = ([pair[i]["seconds"] for pair in rounds] for i in (0, 1))
    return {
        "dataset": key,
        "repeats": args.repeats,
        "files_seconds": round(statistics.median(files), 3),
        "cached_seconds": round(statistics.median(cached), 3),
        "ratio": round(statistics.median(c / f for f, c in zip(files, cached, strict=True)), 4),
        "identical": True,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="fb15k237,wn18rr")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "real.yaml")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=RESULTS / "dataset_cache.tsv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgeval-dataset-cache-") as cache:
        rows = [measure(key, args, cache) for key in args.datasets.split(",")]
    table = stamp(pd.DataFrame(rows))
    if args.out.exists():
        table = pd.concat([pd.read_csv(args.out, sep="\t"), table], ignore_index=True)
    table.to_csv(args.out, sep="\t", index=False)
    print(table.tail(len(rows)).to_string(index=False))


if __name__ == "__main__":
    main()
