"""Benchmark: the S4 stability analysis (Fig. 7) at FB15k-237 test-set size with 13 systems.

20 subset sizes x 50 repeats x 11 metrics (micro MR, MRR, Hits@1/3/10; macro MRR, Hits@1/3/10, MAP@20, nDCG@20) x
13 systems, on synthetic per-answer ranks over the question structure of FB15k-237's test set (20,466 triples ->
40,932 answers in 22,850 questions; the real structure when ../shared/data/fb15k237 exists, a synthetic one of the
same size otherwise). Ranks are never recomputed: the analysis reuses per-question values.

Run: ``python benchmarks/stability.py [--repeats 50] [--systems 13]``; prints the timings and writes them to
``benchmarks/results/stability.tsv``. Target: under 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.studies.s4.stability import stability_table, unit_values
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

FRACTIONS = [0.01] + [round(0.05 * i, 2) for i in range(1, 20)]  # 1%, 5%, ..., 95%: 20 sizes
HITS_AT = (1, 3, 10)
CUTOFF = 20


def question_structure(rng: np.random.Generator) -> pd.DataFrame:
    """(triple, side) answers with their question keys: FB15k-237's test set, or a synthetic one of its size."""
    root = Path(os.environ.get("KGEVAL_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    path = root / "fb15k237" / "test.txt"
    if path.is_file():
        test = pd.read_csv(path, sep="\t", header=None, names=["head", "relation", "tail"], dtype=str)
        source = str(path)
    else:
        n = 20466
        test = pd.DataFrame(
            {
                "head": rng.zipf(1.6, n).astype(str),
                "relation": rng.integers(0, 224, n).astype(str),
                "tail": rng.zipf(1.3, n).astype(str),
            }
        ).drop_duplicates()
        source = "synthetic"
    head = test.assign(side="head", anchor=test["tail"])
    tail = test.assign(side="tail", anchor=test["head"])
    return pd.concat([head, tail], ignore_index=True), source


def synthetic_tables(
    answers: pd.DataFrame, systems: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Answers and questions tables of one level for ``systems`` systems with random (system-dependent) ranks."""
    key = ["side", "relation", "anchor"]
    frames_a, frames_q = [], []
    for s in range(systems):
        ranks = np.floor(rng.pareto(0.8 + 0.02 * s, len(answers)) * 3) + 1
        a = answers.assign(level="complete", system=f"sys{s:02d}", rank=ranks)
        frames_a.append(a)
        q = a.groupby(key, as_index=False).agg(rank=("rank", "min"), num_relevant=("rank", "size"))
        q["map@20"] = np.where(q["rank"] <= 20, 1 / q["rank"], 0.0) * rng.random(len(q))
        q["ndcg@20"] = np.where(q["rank"] <= 20, 1 / np.log2(q["rank"] + 1), 0.0)
        frames_q.append(q.assign(level="complete", system=f"sys{s:02d}"))
    return pd.concat(frames_a, ignore_index=True), pd.concat(frames_q, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--systems", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    structure, source = question_structure(rng)
    answers, questions = synthetic_tables(structure, args.systems, rng)

    start = time.perf_counter()
    values = unit_values(answers, questions, "complete", HITS_AT, CUTOFF)
    prepare = time.perf_counter() - start
    start = time.perf_counter()
    table = stability_table(values, FRACTIONS, args.repeats, args.seed)
    analysis = time.perf_counter() - start

    Q, S, M = values.numerators.shape
    row = {
        "structure": source,
        "num_answers": len(structure),
        "num_questions": Q,
        "num_systems": S,
        "num_metrics": M,
        "num_sizes": len(FRACTIONS),
        "repeats": args.repeats,
        "kendall_taus": len(FRACTIONS) * args.repeats * M,
        "prepare_seconds": round(prepare, 3),
        "analysis_seconds": round(analysis, 3),
        "total_seconds": round(prepare + analysis, 3),
        "cpu_count": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
    }
    out = pd.DataFrame([row])
    print(out.T.to_string(header=False))
    print(table.loc[table["fraction"].isin([0.05, 0.5, 0.95])].to_string(index=False))
    write_tsv(stamp(out), RESULTS / "stability.tsv", sort_by=[])


if __name__ == "__main__":
    main()
