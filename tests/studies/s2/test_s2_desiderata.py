"""S2 desiderata (Hoyt et al. 2022, Table 1): the verdicts on synthetic rank sets, and the evidence behind them."""

from __future__ import annotations

import pytest

from kgeval.io import read_tsv
from kgeval.metrics import METRICS, metric_keys
from kgeval.studies.s2.desiderata import NO, PROPERTIES, YES, DesiderataSettings, desiderata, write_desiderata


@pytest.fixture(scope="module")
def desiderata_tables():
    return desiderata(settings=DesiderataSettings(num_random=60))


def test_desiderata_reproduce_paper_table_1(desiderata_tables):
    """Paper Table 1: MR ✔✘✘✘✘, MRR ✔✔✔✔✘, Hits@k ✔✔✔✘✘ (non-negativity, fixed optimum, asymptotic pessimum,
    anti-monotonicity, size invariance)."""
    table = desiderata_tables[0].set_index("metric")
    props = ["non_negativity", "fixed_optimum", "asymptotic_pessimum", "monotonicity", "size_invariance"]
    assert list(table.loc["mr", props]) == [YES, NO, NO, NO, NO]
    assert list(table.loc["mrr", props]) == [YES, YES, YES, YES, NO]
    for k in (1, 3, 5, 10):
        assert list(table.loc[f"hits@{k}", props]) == [YES, YES, YES, NO, NO]


def test_desiderata_of_adjusted_metrics(desiderata_tables):
    table, evidence = desiderata_tables
    table = table.set_index("metric")
    for key in metric_keys(["adjusted", "z"]):
        assert table.loc[key, "size_invariance"] == YES, key  # expectation 0 (AMR: 1) for every size
    for key in metric_keys(["base"]):
        assert table.loc[key, "size_invariance"] == NO, key
    # the re-indexed metrics have a fixed optimum of 1; AMRI's pessimum is -1 for equal candidate counts
    for key in ("amri", "amrr", "agmri", "ah@10"):
        assert table.loc[key, "fixed_optimum"] == YES
        assert table.loc[key, "non_negativity"] == NO
    assert table.loc["amri", "asymptotic_pessimum"] == YES
    assert set(evidence["property"]) == {
        "non_negativity",
        "fixed_optimum",
        "asymptotic_pessimum",
        "monotonicity",
        "size_invariance",
    }
    assert len(evidence) == 5 * len(table)
    assert set(table.index) == set(metric_keys(["base", "adjusted", "z"]))
    assert all(METRICS[k].label == table.loc[k, "label"] for k in table.index)


#: small rank sets: enough to separate the verdicts, fast to evaluate
SMALL = DesiderataSettings(
    sizes=(20, 200),
    num_ranks=(5, 40),
    pessimum_sizes=(1_000, 100_000, 1_000_000),
    num_random=30,
    monotonicity_size=50,
    monotonicity_sets=3,
)


def test_evidence_numbers_of_mr_and_hits():
    """The numbers behind the verdicts: MR is 1 at the best ranks and N at the worst; MRR falls at every single-rank
    increment, MR never does; the expectation of MRR under random ranks is H_N / N."""
    table, evidence = desiderata(["mr", "hits@1", "mrr"], SMALL)
    assert list(table["metric"]) == ["mr", "hits@1", "mrr"] and list(table.columns[3:]) == list(PROPERTIES)
    detail = evidence.set_index(["metric", "property"])["detail"]
    holds = evidence.set_index(["metric", "property"])["holds"]
    # MR: the value at the best ranks is 1 whatever N and n, but smaller is better, so no fixed optimum
    assert "from 1 to 1" in detail[("mr", "fixed_optimum")] and "larger is worse" in detail[("mr", "fixed_optimum")]
    assert not holds[("mr", "fixed_optimum")]
    # MR at the worst ranks is N itself: it does not converge
    assert "N=100000: 100000, N=1000000: 1e+06" in detail[("mr", "asymptotic_pessimum")]
    # 3 sets of 5 ranks: 15 single-rank increments; MRR falls every time, MR never
    assert detail[("mrr", "monotonicity")].startswith("15/15 ")
    assert detail[("mr", "monotonicity")].startswith("0/15 ")
    # Hits@1 falls only when a rank of exactly 1 becomes 2: fewer than all increments
    assert not holds[("hits@1", "monotonicity")]
    # closed forms make size invariance exact
    assert "closed form" in detail[("mrr", "size_invariance")]
    assert "N=20, n=5: 0.1799" in detail[("mrr", "size_invariance")]  # H_20 / 20 = 0.17989
    assert table.set_index("metric").loc["mr", "label"] == "MR"


def test_monte_carlo_size_invariance_without_closed_form():
    """HMR has no closed-form expectation: the verdict compares Monte-Carlo means and says so."""
    table, evidence = desiderata(["hmr"], SMALL)
    detail = evidence.set_index("property")["detail"]["size_invariance"]
    assert "Monte Carlo over 30 random sets" in detail
    assert table.loc[0, "size_invariance"] == NO  # HMR's expectation grows with N
    assert table.loc[0, "non_negativity"] == YES


def test_write_desiderata(tmp_path):
    table = write_desiderata(tmp_path / "d.tsv", tmp_path / "e.tsv", metrics=["mrr", "amri"], num_random=20)
    back, evidence = read_tsv(tmp_path / "d.tsv"), read_tsv(tmp_path / "e.tsv")
    assert list(back["metric"]) == ["mrr", "amri"] == list(table["metric"])
    assert list(back["size_invariance"]) == [NO, YES]
    assert len(evidence) == 2 * len(PROPERTIES)
    assert list(evidence["property"][:5]) == list(PROPERTIES)
