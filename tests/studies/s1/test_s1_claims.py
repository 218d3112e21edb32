"""S1's claims table: each criterion on small slope tables (and replicates around them) built so that the answer is
known: holds, differs and inconclusive."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import BY_CONSTRUCTION, DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE, read_claims
from kgeval.studies.s1.claims import s1_claims as _s1_claims
from kgeval.studies.s1.claims import write_s1_claims
from kgeval.studies.s1.testsize import slopes


def _replicates(table: pd.DataFrame, spread: float) -> dict:
    """Replicates of each relative change scattered around its point value."""
    rng = np.random.default_rng(0)
    out = {}
    for r in table.itertuples():
        out.setdefault(("pair", int(r.num_train)), {})[r.metric] = r.relative_change + spread * rng.standard_normal(500)
    return out


def s1_claims(slopes_by_pair, reference=None, spread=1e-4):
    return _s1_claims(slopes_by_pair, reference, _replicates(slopes_by_pair["pair"], spread))


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


def test_wide_intervals_are_inconclusive_and_name_the_side():
    table = slopes(_sweep(mr_growth=0.25, amr_drift=0.02, hits_drop=0.5))
    claims = {c.claim: c for c in s1_claims({"pair": table}, spread=5.0)}
    for name in ("s1.fig1_mr_grows_with_test_size", "s1.fig1_hits1_falls_with_test_size",
                 "s1.fig1_amr_stable_with_test_size"):
        assert claims[name].verdict == INCONCLUSIVE, name
        assert "straddles" in claims[name].reason and "holds side" in claims[name].reason, name
        assert "two-stage bootstrap over test mappings (both directions together)" in claims[name].interval


def test_hits_at_one_of_the_untrained_setting_is_left_out():
    # with no training alignments Hits@1 is a random scorer's 1/n; only trained settings decide the claim
    claims = {c.claim: c for c in s1_claims({"pair": slopes(_sweep(0.25, 0.0, 0.5))})}
    assert "over 1 training sizes" in claims["s1.fig1_hits1_falls_with_test_size"].kgeval


@pytest.mark.parametrize("value, computed", [(1.02, "holds"), (1.1, "holds"), (1.5, "differs")])
def test_random_scorer_amr_within_three_std(value, computed):
    reference = pd.DataFrame([{"dataset": "d", "split": "test", "side": "both", "scorer": "random",
                               "rank_type": "realistic", "metric": "amr", "value": value, "expected": 1.0,
                               "expected_std": 0.05}])
    claim = {c.claim: c for c in s1_claims({"pair": slopes(_sweep(0.25, 0.0, 0.5))}, reference)}[
        "s1.amr_random_scorer_is_one"
    ]
    # true whatever the data: its own verdict, never holds or differs; the reason keeps what the z-test gave
    assert claim.verdict == BY_CONSTRUCTION and claim.basis.startswith("by construction: ")
    assert claim.reason.startswith(f"computed: {computed} (max |z| = ")
    assert "true whatever the data: " in claim.reason
    # the interval column shows the quantity judged (z at the point), the +- 1.96 std interval only as context
    z = (value - 1.0) / 0.05
    assert claim.interval.startswith(f"d z = {z:+.2f} (judged: |z| <= 3 at the point")
    assert "AMR +- 1.96 std as context: d [" in claim.interval


def test_written_table_is_a_valid_claims_table(tmp_path):
    path = tmp_path / "testsize" / "pair" / "slopes.tsv"
    path.parent.mkdir(parents=True)
    slopes(_sweep(0.25, 0.0, 0.5)).to_csv(path, sep="\t", index=False)
    for seed in (0, 1):  # one sweep's ranks per split seed: two pools of 100 and 400 mappings, both directions
        ranks = tmp_path / "testsize" / "pair" / "50" / str(seed) / "ranks.parquet"
        ranks.parent.mkdir(parents=True)
        rng = np.random.default_rng(seed)
        ids = [str(i) for i in range(100)] + [str(i) for i in range(400)]
        pd.DataFrame(
            {"num_test": np.repeat([100, 400], [200, 800]),
             "source": [f"a{i}" for i in ids[:100]] + [f"b{i}" for i in ids[:100]]
             + [f"a{i}" for i in ids[100:]] + [f"b{i}" for i in ids[100:]],
             "target": [f"b{i}" for i in ids[:100]] + [f"a{i}" for i in ids[:100]]
             + [f"b{i}" for i in ids[100:]] + [f"a{i}" for i in ids[100:]],
             "side": np.repeat(["left", "right", "left", "right"], [100, 100, 400, 400]),
             "rank_realistic": np.concatenate([rng.integers(1, 20, 200), rng.integers(1, 80, 800)]).astype(float),
             "num_candidates": np.repeat([100, 400], [200, 800])}
        ).to_parquet(ranks)
    table = slopes(_sweep(0.25, 0.0, 0.5))
    path.unlink()
    table[table["num_train"] == 50].to_csv(path, sep="\t", index=False)
    ranks_paths = sorted((tmp_path / "testsize").rglob("ranks.parquet"))
    write_s1_claims([path], None, tmp_path / "s1.tsv", ranks_paths, {"resamples": 100, "permutations": 10, "seed": 0, "level": 0.95})
    table = read_claims(tmp_path / "s1.tsv")
    assert list(table["claim"]) == sorted(table["claim"])
    assert "pair" in table.set_index("claim").loc["s1.fig1_mr_grows_with_test_size", "kgeval"]
