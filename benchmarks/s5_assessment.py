"""Benchmark: S5's untimed test assessment: block-wise sums against the whole-batch product and the masked sums.

:func:`kgeval.studies.s5.assessment.assess_negatives` streams every negative of the test split once and adds, for
each assessed calibrator (isotonic regression and the six Platt functions of each procedure: 13 with the schema
defaults) and each of the five negative strategies, the weighted Brier, hit and posterior sums. It is most of each
``assess_calibration`` job (about 150 of its 190 s on FB15k-237 with TransE in the real tier). This script times,
side by side in one process and on the same batches:

``masked``
    the first implementation: per calibrator and strategy, ``np.where(mask, p * p, 0).sum(axis=1) @ counts`` and
    its siblings (:meth:`CalibrationSums.add_negative_matrix`);
``product``
    the second: per batch one weight matrix (strategies x negatives) and per calibrator one batch-sized feature
    matrix (``p``, ``p^2``, ``[p < 0.5]``), all sums as one matrix product per calibrator and batch;
``blocked``
    the current one (:func:`kgeval.studies.s5.measures.negative_feature_totals`): the same product, block by
    block of 16,384 scores, so that the features stay in cache, and the isotonic function through a lookup grid
    (:class:`kgeval.studies.s5.interpolation.GridInterpolation`, the same bits as :func:`numpy.interp`, which the
    two reference loops call).

It uses a randomly initialised ComplEx (200 dims) on FB15k-237 and a subset of the test triples (the cost is linear
in them), with the pipeline's calibrators (:func:`kgeval.studies.s5.fitting.fit_candidates`, schema defaults)
fitted on a subset of the validation negatives; the sums of the three methods are compared.

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
from kgeval.studies.s5.assessment import _score_batch, assess_negatives, score_triples, strategy_weights
from kgeval.studies.s5.fitting import fit_candidates
from kgeval.studies.s5.measures import CalibrationSums
from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet, queries_per_batch
from kgeval.studies.s5.statistics import CalibrationData
from calibration import s5_default_settings  # benchmarks/calibration.py: S5 as the schema defaults set it
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("masked", "product", "blocked")


def previous_predict(calibrator, scores):
    """The posteriors as the reference loops computed them: :func:`numpy.interp` (a binary search per score) for
    isotonic regression, ``expit(a x + b)`` for Platt (the current predict gives the same bits faster)."""
    from scipy.special import expit

    scores = np.asarray(scores, dtype=np.float64)
    if calibrator.method == "isotonic":
        return np.interp(scores, calibrator.estimator.X_thresholds_, calibrator.estimator.y_thresholds_)
    a, b = calibrator.parameters()
    return expit(a * scores + b)


def masked_sums(scorer, negatives, calibrators, strategies, batch_size):
    """The previous assessment loop (reference): one masked sum per calibrator, strategy and batch."""
    masks = {strategy: negatives.masks(strategy) for strategy in strategies}
    sums = {(c.name, s): CalibrationSums() for c in calibrators for s in strategies}
    for batch in negatives.batches(batch_size):
        scores = _score_batch(scorer, batch.side, batch.anchors, batch.relations)
        selected = {strategy: batch.negatives(masks[strategy]) for strategy in strategies}
        for calibrator in calibrators:
            posteriors = previous_predict(calibrator, scores)
            for strategy in strategies:
                sums[(calibrator.name, strategy)].add_negative_matrix(posteriors, selected[strategy], batch.multiplicity)
    return sums


def product_sums(scorer, negatives, calibrators, strategies, batch_size):
    """The second assessment loop (reference): per calibrator one batch-sized feature matrix and one product."""
    masks = {strategy: negatives.masks(strategy) for strategy in strategies}
    sums = {(c.name, s): CalibrationSums() for c in calibrators for s in strategies}
    for batch in negatives.batches(batch_size):
        scores = _score_batch(scorer, batch.side, batch.anchors, batch.relations).astype(np.float64)
        weights = strategy_weights(batch, masks, strategies, scores.shape)
        counts = weights.sum(axis=1)
        features = np.empty((3, scores.size), dtype=np.float64)
        for calibrator in calibrators:
            features[0] = previous_predict(calibrator, scores).reshape(-1)
            np.multiply(features[0], features[0], out=features[1])
            np.less(features[0], 0.5, out=features[2])
            totals = weights @ features.T
            for row, strategy in enumerate(strategies):
                sums[(calibrator.name, strategy)].add_negative_totals(
                    count=counts[row], sq_error=totals[row, 1], hits=totals[row, 2], posterior=totals[row, 0]
                )
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
    calibrators = fit_candidates(fit, s5_default_settings(512.0))[0]  # both Platt procedures: 13
    subset = test[rng.permutation(len(test))[: args.test]]
    negatives = NegativeSet(subset, [train, valid, test], data.num_entities, data.num_relations)
    batch_size = max(1, queries_per_batch(data.num_entities, args.memory_budget_mb) // 4)
    print(f"FB15k-237: {len(subset)} test triples, {negatives.count('lcwa')} LCWA negatives, {len(calibrators)} "
          f"calibrators x {len(STRATEGIES)} strategies, {batch_size} queries per batch, torch threads "
          f"{torch.get_num_threads()}", flush=True)

    functions = {"masked": masked_sums, "product": product_sums, "blocked": assess_negatives}
    best: dict[str, tuple[float, float]] = {}
    results = {}
    for repeat in range(args.repeats):
        for name in METHODS:
            wall, cpu = time.perf_counter(), time.process_time()
            results[name] = functions[name](scorer, negatives, calibrators, STRATEGIES, batch_size)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
            print(f"repeat {repeat} {name}: {wall:.2f}s wall, {cpu:.2f}s CPU", flush=True)
    fields = ("num_neg", "neg_sq_error", "neg_hits", "neg_posterior")
    worst = {
        name: max(
            abs(getattr(results[name][key], f) - getattr(results["masked"][key], f))
            / max(abs(getattr(results["masked"][key], f)), 1.0)
            for key in results["masked"]
            for f in fields
        )
        for name in METHODS
    }
    print(", ".join(f"{name} {best[name][0]:.2f}s" for name in METHODS) + f" (fastest of {args.repeats}); "
          f"blocked x{best['product'][0] / best['blocked'][0]:.2f} faster than product")
    table = pd.DataFrame(
        [
            {"method": name, "wall_s": wall, "cpu_s": cpu, "test_triples": len(subset),
             "lcwa_negatives": negatives.count("lcwa"), "calibrators": len(calibrators),
             "speedup_over_masked": best["masked"][0] / wall, "speedup_over_product": best["product"][0] / wall,
             "max_relative_difference_to_masked": worst[name], "load_1min": os.getloadavg()[0]}
            for name, (wall, cpu) in best.items()
        ]
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_tsv(stamp(table), args.out, sort_by=["method"])
    print(table.to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
