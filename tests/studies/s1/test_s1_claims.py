"""S1's claims table: each criterion on small slope tables built so that the answer is known."""

from __future__ import annotations

import pandas as pd
import pytest

from kgeval.claims import DIFFERS, HOLDS, NOT_CHECKABLE, read_claims
from kgeval.studies.s1.claims import s1_claims, write_s1_claims
from kgeval.studies.s1.testsize import slopes


def _sweep(mr_growth: float, amr_drift: float, hits_drop: float) -> pd.DataFrame:
    """A collated sweep table: 2 training sizes x 3 test sizes, MR = growth * n, AMR and Hits@1 drifting as asked."""
    rows = []
    for num_train in (0, 50):
        for n in (100, 200, 400):
            values = {
                "mr": mr_growth * n,
                "amr": 0.5 * (1 + amr_drift * (n - 100) / 300),
                "hits@1": 0.3 * (1 - hits_drop * (n - 100) / 300) if num_train else 1 / n,
                "amri": 0.5, "mrr": 0.3, "zmrr": 2.0,
            }
            for metric, value in values.items():
                rows.append({"num_train": num_train, "num_test": n, "seed": 0, "side": "both",
                             "rank_type": "realistic", "metric": metric, "value": value})
    return pd.DataFrame(rows)


def _verdicts(table: pd.DataFrame, reference=None) -> dict[str, str]:
    return {c.claim: c.verdict for c in s1_claims({"pair": slopes(table)}, reference)}


def test_paper_like_sweep_holds():
    verdicts = _verdicts(_sweep(mr_growth=0.25, amr_drift=0.02, hits_drop=0.5))
    assert verdicts["s1.fig1_mr_grows_with_test_size"] == HOLDS
    assert verdicts["s1.fig1_hits1_falls_with_test_size"] == HOLDS
    assert verdicts["s1.fig1_amr_stable_with_test_size"] == HOLDS
    assert verdicts["s1.amr_random_scorer_is_one"] == NOT_CHECKABLE


def test_drifting_amr_and_flat_hits_differ():
    verdicts = _verdicts(_sweep(mr_growth=0.25, amr_drift=0.5, hits_drop=-0.2))
    assert verdicts["s1.fig1_amr_stable_with_test_size"] == DIFFERS  # AMR moves by 50 %
    assert verdicts["s1.fig1_hits1_falls_with_test_size"] == DIFFERS  # Hits@1 rises


def test_hits_at_one_of_the_untrained_setting_is_left_out():
    # with no training alignments Hits@1 is a random scorer's 1/n; only trained settings decide the claim
    claims = {c.claim: c for c in s1_claims({"pair": slopes(_sweep(0.25, 0.0, 0.5))})}
    assert "over 1 training sizes" in claims["s1.fig1_hits1_falls_with_test_size"].kgeval


@pytest.mark.parametrize("value, verdict", [(1.02, HOLDS), (1.5, DIFFERS)])
def test_random_scorer_amr_within_three_std(value, verdict):
    reference = pd.DataFrame([{"dataset": "d", "split": "test", "side": "both", "scorer": "random",
                               "rank_type": "realistic", "metric": "amr", "value": value, "expected": 1.0,
                               "expected_std": 0.05}])
    assert _verdicts(_sweep(0.25, 0.0, 0.5), reference)["s1.amr_random_scorer_is_one"] == verdict


def test_written_table_is_a_valid_claims_table(tmp_path):
    path = tmp_path / "testsize" / "pair" / "slopes.tsv"
    path.parent.mkdir(parents=True)
    slopes(_sweep(0.25, 0.0, 0.5)).to_csv(path, sep="\t", index=False)
    write_s1_claims([path], None, tmp_path / "s1.tsv")
    table = read_claims(tmp_path / "s1.tsv")
    assert list(table["claim"]) == sorted(table["claim"])
    assert "pair" in table.set_index("claim").loc["s1.fig1_mr_grows_with_test_size", "kgeval"]
