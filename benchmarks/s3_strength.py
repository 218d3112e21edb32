"""Benchmark: S3 methods in their papers' protocol (DBP15k fr-en, 30 % seeds, test candidates) - Hits@1 and seconds.

Runs :func:`kgeval.studies.s3.strength.method_strength` for each ``--models`` entry with the settings of
``studies.s3.<model>`` in ``--config`` (default ``config/real.yaml``), each overridden by ``--set model.key=value``
(YAML values, e.g. ``--set bootea.num_epochs=40``), and appends one row per run to
``benchmarks/results/s3_strength_frEN.tsv`` with the command line, so that each strengthening change is measured
against the settings it replaces in the same file. Needs ``../shared/data`` (or ``--data-dir``).

    python benchmarks/s3_strength.py --models bootea,rdgcn [--set bootea.num_epochs=40] [--ratios 0.3] [--label x]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from kgeval.config import read_yaml
from kgeval.studies.s3.jobs import load_pair_for
from kgeval.studies.s3.strength import PUBLISHED, StrengthSettings, method_strength
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]


def _spec(config: dict, model: str) -> dict:
    """``studies.s3.<model>`` as the workflow gives it (s3_model_spec in workflow/rules/common.smk)."""
    s3 = config["studies"]["s3"]
    if model == "gcn_align":
        return {**config["ea_models"].get("gcn_align", {}), **s3.get("gcn_align", {})}
    if model in ("rdgcn", "multike"):
        return {**s3.get(model, {}), "name_vectors": s3["name_vectors"]}
    return dict(s3.get(model, {}))


def _set(spec: dict, path: str, value: object) -> None:
    keys = path.split(".")
    for key in keys[:-1]:
        spec = spec.setdefault(key, {})
    spec[keys[-1]] = value


def main() -> None:
    """Parse the arguments, run every method and append the rows."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(ROOT / "config/real.yaml"))
    parser.add_argument("--data-dir", default=os.environ.get("KGEVAL_SHARED_DATA", str(ROOT.parent / "shared/data")))
    parser.add_argument("--pair", default="dbp15k_fr_en")
    parser.add_argument("--models", default="gcn_align,bootea,rdgcn,multike")
    parser.add_argument("--set", action="append", default=[], help="model.key=value (YAML value)")
    parser.add_argument("--ratio", type=float, default=0.3)
    parser.add_argument("--rdgcn-ratios", default="", help="comma-separated extra RDGCN ratios")
    parser.add_argument("--valid-fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default=str(RESULTS / "s3_strength_frEN.tsv"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    config = read_yaml(args.config)
    pair_settings = config["studies"]["s3"]["datasets"].get(args.pair)
    s3pair = load_pair_for(args.pair, config["ea_datasets"][args.pair], pair_settings, args.data_dir)
    extra = tuple(float(r) for r in args.rdgcn_ratios.split(",") if r)
    settings = StrengthSettings(args.ratio, args.valid_fraction, extra, args.seed)
    frames = []
    for model in args.models.split(","):
        spec = _spec(config, model)
        for item in args.set:
            path, value = item.split("=", 1)
            if path.split(".")[0] == model:
                _set(spec, path.split(".", 1)[1], yaml.safe_load(value))
        start = time.perf_counter()
        rows = method_strength(s3pair, model, spec, settings)
        rows["wall_seconds"] = time.perf_counter() - start
        rows["published_hits_at_1"] = PUBLISHED[model][0]
        rows["settings"] = yaml.safe_dump(spec, default_flow_style=True, width=10_000).strip()
        rows["label"] = args.label
        rows["command"] = "python benchmarks/s3_strength.py " + " ".join(sys.argv[1:])
        frames.append(rows)
        print(rows[["model", "start", "seed_ratio", "hits_at_1", "valid_hits_at_1", "train_seconds"]].to_string())
    table = stamp(pd.concat(frames, ignore_index=True))
    out = Path(args.out)
    if out.exists():
        table = pd.concat([pd.read_csv(out, sep="\t"), table], ignore_index=True)
    table.to_csv(out, sep="\t", index=False)


if __name__ == "__main__":
    main()
