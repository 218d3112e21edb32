"""Benchmark: S5's untimed test assessment, matrix-product sums vs one masked sum per calibrator and strategy.

:func:`kgeval.studies.s5.assessment.assess_negatives` streams every LCWA negative of the test split once and adds,
for each of the seven calibrators (isotonic regression and six Platt functions) and five negative strategies, the
weighted Brier, hit and posterior sums. In the real-data config this assessment was most of each
``assess_calibration`` job (about 4 of its 5 minutes on FB15k-237). This script times, side by side in one process
and on the same batches:

``masked``
    the previous implementation: per calibrator and strategy, ``np.where(mask, p * p, 0).sum(axis=1) @ counts`` and
    its siblings (:meth:`CalibrationSums.add_negative_matrix`);
``product``
    the current one: per batch one weight matrix (strategies x negatives) and per calibrator one feature matrix
    (``p``, ``p^2``, ``[p < 0.5]``), all sums as one matrix product.

It uses a randomly initialised ComplEx (200 dims) on FB15k-237 and a subset of the test triples (the cost is linear
in them), with calibrators fitted on a subset of the validation negatives; the sums of both methods are compared.

Run: ``python benchmarks/s5_assessment.py [--data-dir ../shared/data] [--test 1000] [--repeats 3]``; prints the
figures and writes ``benchmarks/results/s5_assessment.tsv``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from kgeval.io import write_tsv
from kgeval.lp.datasets import load_dataset
from kgeval.lp.filtering import as_triples_array
from kgeval.lp.scoring import make_scorer
from kgeval.studies.s5.assessment import _score_batch, assess_negatives, score_triples
from kgeval.studies.s5.calibration import fit_isotonic, fit_platt_gd
from kgeval.studies.s5.measures import CalibrationSums
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet, queries_per_batch
from kgeval.studies.s5.statistics import CalibrationData
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]
PLATT_INITS = [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)]


def masked_sums(scorer, negatives, calibrators, strategies, batch_size):
    """The previous assessment loop (reference): one masked sum per calibrator, strategy and batch."""
    masks = {strategy: negatives.masks(strategy) for strategy in strategies}
    sums = {(c.name, s): CalibrationSums() for c in calibrators for s in strategies}
    for batch in negatives.batches(batch_size):
        scores = _score_batch(scorer, batch.side, batch.anchors, batch.relations)
        selected = {strategy: batch.negatives(masks[strategy]) for strategy in strategies}
        for calibrator in calibrators:
            posteriors = calibrator.predict(scores)
            for strategy in strategies:
                sums[(calibrator.name, strategy)].add_negative_matrix(posteriors, selected[strategy], batch.multiplicity)
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--test", type=int, default=1000, help="test triples assessed")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-budget-mb", type=float, default=512.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "s5_assessment.tsv")
    args = parser.parse_args()

    from pykeen.models import model_resolver

    data = load_dataset("fb15k237", {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}, args.data_dir)
    train, valid, test = (as_triples_array(f.mapped_triples) for f in (data.training, data.validation, data.testing))
    model = model_resolver.make("ComplEx", triples_factory=data.training, embedding_dim=200, random_seed=0).eval()
    scorer = make_scorer(model)
    rng = np.random.default_rng(0)
    fit = CalibrationData(score_triples(model, valid[:2000]))
    fit.add_negatives(score_triples(model, NegativeSet(valid[:200], [train, valid], data.num_entities,
                                                       data.num_relations).enumerate("lcwa")))
    calibrators = [fit_isotonic(fit)] + [fit_platt_gd(fit, init=init, steps=200) for init in PLATT_INITS]
    subset = test[rng.permutation(len(test))[: args.test]]
    negatives = NegativeSet(subset, [train, valid, test], data.num_entities, data.num_relations)
    batch_size = max(1, queries_per_batch(data.num_entities, args.memory_budget_mb) // 4)
    print(f"FB15k-237: {len(subset)} test triples, {negatives.count('lcwa')} LCWA negatives, {len(calibrators)} "
          f"calibrators x {len(STRATEGIES)} strategies, {batch_size} queries per batch, torch threads "
          f"{torch.get_num_threads()}", flush=True)

    best: dict[str, tuple[float, float]] = {}
    results = {}
    for repeat in range(args.repeats):
        for name, function in (("masked", masked_sums), ("product", assess_negatives)):
            wall, cpu = time.perf_counter(), time.process_time()
            results[name] = function(scorer, negatives, calibrators, STRATEGIES, batch_size)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
            print(f"repeat {repeat} {name}: {wall:.2f}s wall, {cpu:.2f}s CPU", flush=True)
    worst = max(
        abs(getattr(results["product"][key], f) - getattr(results["masked"][key], f))
        / max(abs(getattr(results["masked"][key], f)), 1.0)
        for key in results["masked"]
        for f in ("num_neg", "neg_sq_error", "neg_hits", "neg_posterior")
    )
    speedup = best["masked"][0] / best["product"][0]
    print(f"masked {best['masked'][0]:.2f}s, product {best['product'][0]:.2f}s (fastest of {args.repeats}): "
          f"x{speedup:.2f} faster; largest relative difference of the sums {worst:.1e}")
    table = pd.DataFrame(
        [
            {"method": name, "wall_s": wall, "cpu_s": cpu, "test_triples": len(subset),
             "lcwa_negatives": negatives.count("lcwa"), "speedup_over_masked": best["masked"][0] / wall,
             "max_relative_difference": worst, "load_1min": os.getloadavg()[0]}
            for name, (wall, cpu) in best.items()
        ]
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_tsv(stamp(table), args.out, sort_by=["method"])
    print(table.to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
