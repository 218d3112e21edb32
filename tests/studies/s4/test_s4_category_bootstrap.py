"""S4's Table 3 and 4 taus resampled over components of linked questions: the full sample gives the tables' taus."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import DIFFERS
from kgeval.studies.s4.analysis import tau_by_category, tau_reweighted
from kgeval.studies.s4.category_bootstrap import compute_group_taus
from kgeval.studies.s4.claims import category_claims

from test_s4_stability import five_systems


@pytest.fixture(scope="module")
def evaluated():
    answers, questions = five_systems()
    relations = sorted(set(answers["relation"]))
    categories = pd.Series({r: ("1-1", "1-N", "N-1", "N-N")[i % 4] for i, r in enumerate(relations)})
    return answers, questions, categories


def test_the_full_sample_gives_the_tables_taus(evaluated) -> None:
    answers, questions, categories = evaluated
    deepest = max((lv for lv in set(questions["level"]) if lv.startswith("depth")), key=lambda lv: int(lv[5:]))
    t3, t4 = compute_group_taus(answers, questions, categories, hits_at=(1, 3), ir_cutoff=20, resamples=50, seed=3)
    table3 = tau_by_category(answers, categories, level=deepest, hits_at=(1, 3))
    for row in table3.itertuples():
        got = t3.point[t3.groups.index((row.side, row.category)), t3.metrics.index(row.metric)]
        assert got == pytest.approx(row.tau, abs=1e-9, nan_ok=True)
    table4 = tau_reweighted(answers, level=deepest, hits_at=(1, 3))
    for row in table4.itertuples():
        got = t4.point[t4.groups.index(row.distribution), t4.metrics.index(row.metric)]
        assert got == pytest.approx(row.tau, abs=1e-9, nan_ok=True)
    assert t3.replicates.shape == (8, 50, len(t3.metrics)) and t4.replicates.shape == (2, 50, len(t4.metrics))
    assert "components of" in t3.unit
    assert (t3.answers[:, 1] >= t3.answers[:, 0]).all()  # pooling only adds answers


def test_an_unchanged_ranking_never_holds(evaluated) -> None:
    """The pooled level a copy of the sparse one: tau 1 in every resample, so no "changes" rule holds."""
    answers, questions, categories = evaluated
    copy = {"answers": answers[answers["level"] == "sparse"], "questions": questions[questions["level"] == "sparse"]}
    answers = pd.concat([copy["answers"], copy["answers"].assign(level="depth1")], ignore_index=True)
    questions = pd.concat([copy["questions"], copy["questions"].assign(level="depth1")], ignore_index=True)
    t3, t4 = compute_group_taus(answers, questions, categories, hits_at=(1, 3), ir_cutoff=20, resamples=30, seed=1)
    finite = t3.replicates[np.isfinite(t3.replicates)]
    assert finite.size and np.allclose(finite, 1.0)
    claims = {c.claim.split(".")[-1]: c for c in category_claims("x", t3, t4, "measured")}
    assert claims["table3_many_side_rankings_change"].verdict == DIFFERS
    assert claims["table4_sparse_distribution_below_0_4"].verdict == DIFFERS
    assert claims["table3_one_to_one_unchanged"].verdict == "by construction"
