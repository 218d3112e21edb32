"""S4 at paper scale from the authors' released results, through the file jobs of ``study_s4_released``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.shared_data

HITS = (1, 3, 10)


@pytest.mark.slow
def test_released_workflow_writes_the_claims_tables(tmp_path, shared_data) -> None:
    """The released-results targets through Snakemake, offline from the shared data: both claims tables are complete."""
    from conftest import copy_workflow, run_snakemake

    from kgeval.claims import COLUMNS, VERDICTS, read_claims

    workdir = copy_workflow(tmp_path / "wf")
    run_snakemake(
        workdir,
        "study_s2_released",
        "study_s4_released",
        "--cores",
        "2",
        "--configfile",
        "config/released.yaml",
        "--config",
        f"data_dir={shared_data}",
        "--quiet",
        "rules",
    )
    for study, expected in (
        ("s2", "s2.fig1_tucker_amrr_wn18rr_above_nations"),
        ("s4", "s4.table4_sparse_distribution"),
    ):
        table = read_claims(workdir / "results" / "released" / "claims" / f"{study}_released.tsv")
        assert tuple(table.columns) == COLUMNS
        assert set(table["verdict"]) <= set(VERDICTS)
        assert list(table["claim"]) == sorted(table["claim"])
        assert expected in set(table["claim"])
        needs_reason = table["verdict"] != "holds"
        assert (table.loc[needs_reason, "reason"].str.len() > 0).all()
    s4 = read_claims(workdir / "results" / "released" / "claims" / "s4_released.tsv").set_index("claim")["verdict"]
    assert s4["s4.table4_complete_distribution"] == "holds"
    assert s4["s4.fig5_macro_above_micro_at_every_depth"] == "differs"
    figures = workdir / "results" / "released" / "s4" / "released" / "figures"
    assert (figures / "fig3_system_ranking.png").stat().st_size > 1000
    assert np.isfinite(
        pd.read_csv(workdir / "results" / "released" / "tables" / "expectations.tsv", sep="\t")["expectation"]
    ).all()
