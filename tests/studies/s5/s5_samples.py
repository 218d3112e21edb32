"""Shared inputs of the S5 tests: synthetic scores (streamed or point by point), collated tables, the default settings.

A plain module, not a conftest.py: the tests import ``conftest`` (tests/conftest.py) by name."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.config import load_schema
from kgeval.studies.s5.negatives import STRATEGIES
from kgeval.studies.s5.statistics import CalibrationData


def score_sample(seed: int, num_pos: int = 60, num_neg: int = 4000):
    """Positives higher than negatives on average, with exact ties (rounding) and multiplicities."""
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(1.0, 1.0, num_pos), 2)
    neg = np.round(rng.normal(-1.0, 1.5, num_neg), 2)
    neg[:20] = pos[:20]  # negatives tied with positives
    counts = rng.integers(0, 4, num_neg)  # multiplicities, zeros included
    return pos, neg, counts


def streamed(pos, neg, counts, num_bins=2**10, chunks=7, seed=0):
    data = CalibrationData(pos, num_bins=num_bins)
    order = np.random.default_rng(seed).permutation(len(neg))
    for part in np.array_split(order, chunks):
        data.add_negatives(neg[part], counts[part])
    return data


def dense_points(pos, neg, counts):
    """All points at once with the weights of Eq. 11 (negatives repeated by their counts)."""
    neg_all = np.repeat(neg, counts)
    x = np.concatenate([pos, neg_all])
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg_all))])
    w = np.concatenate([np.full(len(pos), 1 / len(pos)), np.full(len(neg_all), 1 / len(neg_all))])
    return x, y, w





def synthetic_tables():
    """A collated ``(assessment, summary)`` of three models on two datasets, with uniform random values."""
    rows, summary = [], []
    rng = np.random.default_rng(0)
    for dataset in ("d1", "d2"):
        for model, cls in (("transe", "TransE"), ("complex", "ComplEx"), ("boxe", "BoxE")):
            for method, name in (("isotonic", "isotonic"), ("platt", "platt(1,0)")):
                for strategy in STRATEGIES:
                    for metric in ("r2_w", "bs_w", "ba", "tpr", "tnr", "mean_posterior", "pearson_r"):
                        rows.append(
                            (
                                dataset,
                                model,
                                cls,
                                0,
                                name,
                                method,
                                method == "isotonic",
                                strategy,
                                metric,
                                rng.uniform(),
                            )
                        )
            for metric, value in (("mr", rng.uniform(1, 10)), ("t_a", 1.0), ("t_lp", 4.0), ("pct_delta_t", -75.0)):
                summary.append((dataset, model, cls, 0, metric, value))
    assessment = pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "model",
            "model_class",
            "seed",
            "calibrator",
            "method",
            "selected",
            "strategy",
            "metric",
            "value",
        ],
    )
    summary = pd.DataFrame(summary, columns=["dataset", "model", "model_class", "seed", "metric", "value"])
    return assessment, summary



def s5_section():
    """The ``studies.s5`` config section as the validated config holds it when nothing is set: the schema defaults."""
    properties = load_schema()["properties"]["studies"]["properties"]["s5"]["properties"]
    section = {key: spec["default"] for key, spec in properties.items()}
    for key, spec in properties.items():
        if spec.get("type") == "object" and "properties" in spec:
            section[key] = {k: v["default"] for k, v in spec["properties"].items()}
    return section
