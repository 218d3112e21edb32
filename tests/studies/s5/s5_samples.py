"""Shared inputs of the S5 tests: synthetic scores (streamed or point by point), collated tables, the default settings.

A plain module, not a conftest.py: the tests import ``conftest`` (tests/conftest.py) by name."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from kgeval.config import load_schema
from kgeval.studies.s5.negatives import STRATEGIES
from kgeval.studies.s5.statistics import CalibrationData


@functools.lru_cache(maxsize=1)
def nations_complex():
    """Nations and a small ComplEx trained on it (8 dims, 3 epochs, seed 0), once per test process: ``(data, model)``.

    The tests of the assessment and of its per-triple sums read the same model; they must not change it.
    """
    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.training import train_model

    torch.set_num_threads(1)
    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"}, None)
    spec = {"model": "ComplEx", "model_kwargs": {"embedding_dim": 8}, "training_kwargs": {"num_epochs": 3}}
    return data, train_model(data, spec, seed=0).model


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


def weighted_metrics(y_true, y_prob, sample_weight=None, threshold: float = 0.5) -> dict[str, float]:
    """Reference: the paper's measures (Eq. 7, 8, 9, 16, 17) from explicit arrays of labels in {0, 1}, posteriors and
    any weights (default: all one), posteriors ``>= threshold`` predicted positive: ``bs_w``, ``r2_w`` (Eq. 8,
    ``y_bar`` the weighted mean of the posteriors), ``r2_w_label_mean`` (``y_bar`` the weighted mean of the labels,
    as :func:`sklearn.metrics.r2_score`), ``tpr``, ``tnr``, ``ba``."""
    y = np.asarray(y_true, dtype=np.float64).reshape(-1)
    p = np.asarray(y_prob, dtype=np.float64).reshape(-1)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    assert y.shape == p.shape == w.shape and np.isin(y, (0.0, 1.0)).all()
    residual = float(w @ (p - y) ** 2)
    r2 = {}
    for key, centre in (("r2_w", p), ("r2_w_label_mean", y)):
        y_bar = float(w @ centre / w.sum())
        total = float(w @ (y_bar - y) ** 2)
        r2[key] = 1.0 - residual / total if total > 0 else float("nan")
    predicted = p >= threshold
    positives, negatives = y == 1, y == 0
    tpr = float((predicted & positives).sum() / positives.sum()) if positives.any() else float("nan")
    tnr = float((~predicted & negatives).sum() / negatives.sum()) if negatives.any() else float("nan")
    return {"bs_w": residual / float(w.sum()), **r2, "tpr": tpr, "tnr": tnr, "ba": (tpr + tnr) / 2.0}





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
