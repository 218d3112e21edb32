"""S4 at paper scale from the authors' released results, through the file jobs of ``study_s4_released``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

HITS = (1, 3, 10)


def test_table3_rows_in_the_paper_order(tmp_path, monkeypatch) -> None:
    """write_tau_by_category reads the folder it is given and writes Table 3 by side, category 1-1 .. N-N, metric."""
    from kgeval.io import read_tsv
    from kgeval.studies.s4 import released_jobs

    rows = [
        (side, category, metric, 0.1 * i)
        for i, (side, category, metric) in enumerate(
            (s, c, m) for s in ("tail", "head") for c in ("N-N", "1-N", "1-1", "N-1") for m in ("mrr", "hits@1")
        )
    ]
    shuffled = pd.DataFrame(rows, columns=["side", "category", "metric", "tau"]).sample(frac=1, random_state=0)
    calls = []

    def folder(data_dir, name):
        calls.append((data_dir, name))
        return tmp_path / "release"

    def tau_by_category(root, hits_at):
        assert root == tmp_path / "release" and tuple(hits_at) == HITS
        return shuffled

    monkeypatch.setattr(released_jobs, "results_folder", folder)
    monkeypatch.setattr(released_jobs, "released_tau_by_category", tau_by_category)
    out = tmp_path / "table3.tsv"
    released_jobs.write_tau_by_category(data_dir="data", folder="released/kgc", hits_at=HITS, out=out)
    assert calls == [("data", "released/kgc")]
    expected = [
        (s, c, m) for s in ("head", "tail") for c in ("1-1", "1-N", "N-1", "N-N") for m in ("hits@1", "mrr")
    ]
    written = read_tsv(out)
    assert list(written[["side", "category", "metric"]].itertuples(index=False, name=None)) == expected
    taus = dict(zip(((s, c, m) for s, c, m, _ in rows), (t for *_, t in rows), strict=True))
    assert np.allclose(written["tau"], [taus[key] for key in expected])
    assert list(written.columns) == ["side", "category", "metric", "tau"]


def test_examples_keep_the_configured_order(tmp_path, monkeypatch) -> None:
    from kgeval.io import read_tsv
    from kgeval.studies.s4 import released_jobs

    questions = [{"relation": "/r/b", "anchor": "Z"}, {"relation": "/r/a", "anchor": "A"}]
    monkeypatch.setattr(released_jobs, "labels_folder", lambda data_dir, labels: tmp_path / str(labels))

    def examples(folder, asked):
        assert folder == tmp_path / "kgc" and list(asked) == questions
        return pd.DataFrame({"relation": [q["relation"] for q in asked], "anchor": [q["anchor"] for q in asked]})

    monkeypatch.setattr(released_jobs, "added_positive_examples", examples)
    out = tmp_path / "table2.tsv"
    released_jobs.write_examples(data_dir=None, labels="kgc", questions=questions, out=out)
    assert list(read_tsv(out)["anchor"]) == ["Z", "A"]  # not sorted


@pytest.mark.shared_data
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
