"""S2 end to end: ``snakemake study_s2`` on config/test.yaml plus a third dataset (S2 needs three: the test config
alone skips it), with the tables behind the figures checked against values recomputed from the rank files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import spearmanr

from conftest import REPO, copy_workflow, run_snakemake
from kgeval.claims import COLUMNS, VERDICTS
from kgeval.studies import STUDIES

pytestmark = pytest.mark.slow

DATASETS = ["nations", "tiny", "umls"]


@pytest.fixture(scope="module")
def s2_run(tmp_path_factory):
    """The test config with UMLS added and every study but S2 off; ``study_s2`` run once. Returns the results folder."""
    workdir = copy_workflow(tmp_path_factory.mktemp("s2_workflow"))
    config = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    config["datasets"]["umls"] = {"source": "pykeen", "name": "UMLS"}
    for study in STUDIES:
        if study != "s2":
            config["studies"].setdefault(study, {})["enabled"] = False
    (workdir / "config" / "s2.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run_snakemake(workdir, "--cores", "2", "study_s2", "--configfile", "config/s2.yaml", "--quiet", "rules")
    return workdir / "results" / "test"


def _expected_mrr(num_candidates: np.ndarray) -> float:
    """E[MRR] of uniformly random ranks, by enumeration: the mean over queries of (1/n) * sum_{k=1..n} 1/k."""
    return float(np.mean([np.mean(1.0 / np.arange(1, n + 1)) for n in num_candidates.astype(int)]))


def test_grid_recomputed_from_ranks(s2_run):
    grid = pd.read_csv(s2_run / "s2" / "tables" / "grid.tsv", sep="\t")
    models = ["complex", "distmult", "transe"]
    assert sorted(grid.dataset.unique()) == DATASETS
    assert sorted(grid.model.unique()) == models
    mrr = grid[grid.family == "mrr"]
    assert len(mrr) == len(DATASETS) * len(models)
    for row in mrr.itertuples():
        ranks = pd.read_parquet(s2_run / "ranks" / row.dataset / row.model / "0" / "test.parquet")
        inverse = 1.0 / ranks.rank_realistic.to_numpy(float)
        expectation = _expected_mrr(ranks.num_candidates.to_numpy())
        assert row.base == pytest.approx(inverse.mean(), rel=1e-9)
        assert row.base_expectation == pytest.approx(expectation, rel=1e-9)
        # the adjusted index of Hoyt et al. (2022), Eq. 6: (M - E[M]) / (1 - E[M]) for an increasing metric
        assert row.adjusted == pytest.approx((inverse.mean() - expectation) / (1 - expectation), rel=1e-6)
        assert row.mean_num_candidates == pytest.approx(ranks.num_candidates.mean(), rel=1e-9)


def test_size_correlation_is_spearman_of_the_grid(s2_run):
    grid = pd.read_csv(s2_run / "s2" / "tables" / "grid.tsv", sep="\t")
    table = pd.read_csv(s2_run / "s2" / "tables" / "size_correlation.tsv", sep="\t")
    mrr = grid[grid.family == "mrr"]
    row = table[(table.family == "mrr") & (table.variant == "base") & (table.scope == "all models")].iloc[0]
    rho = spearmanr(mrr.mean_num_candidates, mrr.base).statistic
    assert row.n_points == 9 and row.n_datasets == 3
    assert row.rho == pytest.approx(rho, rel=1e-9)


def test_claims_and_figures(s2_run):
    claims = pd.read_csv(s2_run / "claims" / "s2.tsv", sep="\t")
    assert tuple(claims.columns) == COLUMNS
    assert len(claims) >= 2 and claims.claim.is_unique and claims.claim.is_monotonic_increasing
    assert set(claims.verdict) <= set(VERDICTS)
    for figure in ("s2/figures/expectation_curves.png", "s2/figures/family_mrr.png"):
        assert (s2_run / figure).stat().st_size > 10_000, figure
