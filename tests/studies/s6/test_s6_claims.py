import numpy as np
import pandas as pd

from kgeval.studies.s6.claims import partial_sizes, pooled, s6_claims


def _reps(error_uniform, error_guided):
    rows = []
    for sampler, err in (("uniform", error_uniform), ("static", error_guided), ("probabilistic", error_guided)):
        for estimator, metric, e in (("naive", "mrr", err), ("adjusted", "amrr", err / 2),
                                     ("naive", "hits@10", err), ("adjusted", "ah@10", err / 2)):
            for r in range(20):
                rows.append(("d", "m", 0, sampler, 5, estimator, metric, r, 0.3 + e + 0.001 * r, 0.3))
        for r in range(20):  # the scaled MR, off by err % of the full MR of 300
            rows.append(("d", "m", 0, sampler, 5, "scaled", "mr", r, 300 * (1 + err / 100) + 0.01 * r, 300.0))
    return pd.DataFrame(rows, columns=["dataset", "model", "seed", "sampler", "k", "estimator", "metric",
                                       "replicate", "estimate", "full"])


def _verdicts(reps):
    partial = pd.DataFrame({"dataset": ["d"], "k": [5]})
    ordering = pd.DataFrame(columns=["dataset", "seed", "sampler", "k", "estimator", "metric", "models", "tau",
                                     "ci_low", "ci_high"])
    return {c.claim: c.verdict for c in s6_claims(reps, ordering, partial, 0.05, 0.95)}


def test_claims_hold_and_fail_on_the_right_inputs():
    good = _verdicts(_reps(0.3, 0.01))
    assert good["s6.uniform_overestimates_mrr"] == "holds"
    assert good["s6.guided_estimates_full_mrr"] == "holds"
    assert good["s6.x.adjusted_move_less_under_sampling"] == "holds"
    assert good["s6.guided_keeps_model_order"] == "not checkable"
    claims = {c.claim: c for c in s6_claims(_reps(0.3, 0.01), pd.DataFrame(columns=[
        "dataset", "seed", "sampler", "k", "estimator", "metric", "models", "tau", "ci_low", "ci_high"]),
        pd.DataFrame({"dataset": ["d"], "k": [5]}), 0.05, 0.95)}
    unbiased = claims["s6.x.uniform_scaled_mr_unbiased"]
    assert unbiased.verdict == "by construction" and "computed: holds" in unbiased.reason
    biased = {c.claim: c for c in s6_claims(_reps(3.0, 0.01), pd.DataFrame(columns=[
        "dataset", "seed", "sampler", "k", "estimator", "metric", "models", "tau", "ci_low", "ci_high"]),
        pd.DataFrame({"dataset": ["d"], "k": [5]}), 0.05, 0.95)}["s6.x.uniform_scaled_mr_unbiased"]
    assert biased.verdict == "by construction" and "computed: differs" in biased.reason
    bad = _verdicts(_reps(-0.2, 0.2))
    assert bad["s6.uniform_overestimates_mrr"] == "differs"
    assert bad["s6.guided_estimates_full_mrr"] == "differs"


def _order_verdict(low: float, high: float, tau: float) -> str:
    ordering = pd.DataFrame(
        [("d", 0, sampler, 5, "naive", "mrr", 4, t, lo, hi) for sampler, t, lo, hi in
         (("uniform", 0.0, -0.5, 0.5), ("static", tau, low, high), ("probabilistic", tau, low, high))],
        columns=["dataset", "seed", "sampler", "k", "estimator", "metric", "models", "tau", "ci_low", "ci_high"])
    claims = s6_claims(_reps(0.3, 0.01), ordering, pd.DataFrame({"dataset": ["d"], "k": [5]}), 0.05, 0.95)
    return {c.claim: c for c in claims}["s6.guided_keeps_model_order"].verdict


def test_the_ordering_claim_asks_every_guided_tau_to_reach_the_same_ranking_bar():
    assert _order_verdict(0.95, 1.0, 1.0) == "holds"
    assert _order_verdict(0.2, 0.8, 0.6) == "differs"
    assert _order_verdict(0.6, 1.0, 0.9) == "inconclusive"  # a wide interval: neither
    # the uniform sampler's tau is context only: a bad uniform ordering does not make the claim hold
    assert _order_verdict(0.0, 0.5, 0.3) == "differs"


def test_pooled_and_partial_sizes():
    point, low, high, n = pooled(_reps(0.1, 0.1).query("sampler == 'uniform' and metric == 'mrr' and estimator == 'naive'"),
                                 lambda f: (f["estimate"] - f["full"]).to_numpy(), 0.95)
    assert low <= point <= high and n == 1
    narrow = pooled(_reps(0.1, 0.1).query("sampler == 'uniform' and metric == 'mrr' and estimator == 'naive'"),
                    lambda f: (f["estimate"] - f["full"]).to_numpy(), 0.5)
    assert low <= narrow[1] <= narrow[2] <= high  # the level is the one asked for
    sizes = partial_sizes(pd.DataFrame({"dataset": ["d", "d"], "num_candidates": [11, 11]}), [5, 10, 20])
    assert sizes["partial"].tolist() == [True, False, False]
    assert np.isnan(pooled(pd.DataFrame(), None, 0.95)[0])
