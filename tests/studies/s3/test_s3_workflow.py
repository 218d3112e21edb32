"""S3 end to end: config/test.yaml through Snakemake (the shared `test_workflow` run), then the tables' shape."""

from __future__ import annotations

import pandas as pd
import pytest

from kgeval.io import read_tsv


@pytest.mark.slow
def test_s3_tables_and_figure(test_workflow):
    out = test_workflow / "results" / "test" / "s3"
    t2 = read_tsv(out / "tables" / "table2.tsv")
    assert set(t2["context"]) == {"ideal", "industrial"}
    assert set(t2["model"]) == {"gcn_align", "transe_merge", "bootea", "rdgcn", "multike", "name_similarity"}
    for column in ("hits@1_same", "hits@1_small", "hits@1_all", "hits@5_all", "mrr_all", "amri_different", "zmrr_large"):
        assert column in t2.columns
    assert t2["hits@1_all"].between(0, 1).all() and t2["amri_all"].between(-1, 1).all()
    t3 = read_tsv(out / "tables" / "table3.tsv")
    assert len(t3) == 6 * 4  # 6 methods x (none, both) x (20%, 2%) in config/test.yaml
    sizes = read_tsv(out / "tables" / "split_sizes.tsv")
    assert sizes.groupby("kind")["num_alignments"].sum().nunique() == 1  # each kind partitions all alignments
    bias = read_tsv(out / "tables" / "bias_check.tsv")
    both = bias[(bias["bias"] == "both")].set_index(["train_ratio", "role"])
    assert both.loc[(0.02, "seed"), "share_small"] < both.loc[(0.02, "test"), "share_small"]
    assert both.loc[(0.02, "seed"), "mean_s_name"] > both.loc[(0.02, "test"), "mean_s_name"]
    assert (out / "figures" / "umls_two_view_splits.png").stat().st_size > 0
    ranks = pd.read_parquet(out / "umls_two_view" / "runs" / "gcn_align" / "both" / "0.02" / "0" / "ranks.parquet")
    assert {"id1", "id2", "side", "rank_realistic", "num_candidates"} <= set(ranks.columns)


@pytest.mark.slow
def test_claim_settings_only_is_checked_against_the_methods(tmp_path):
    """``studies.s3.claim_settings_only`` naming a method outside ``studies.s3.models`` stops the dry run with the
    key and the fix; a listed method plans the same jobs as before (its skipped settings are written by the job)."""
    import subprocess
    import sys

    from conftest import copy_workflow

    workdir = copy_workflow(tmp_path)

    def dry_run(methods: str) -> subprocess.CompletedProcess:
        (workdir / "overlay.yaml").write_text(f"studies:\n  s3:\n    claim_settings_only: {methods}\n")
        return subprocess.run(
            [sys.executable, "-m", "snakemake", "study_s3", "--dry-run", "--quiet", "rules",
             "--configfile", "config/test.yaml", "overlay.yaml"],
            cwd=workdir, capture_output=True, text=True,
        )

    bad = dry_run("[rsn4ea]")
    assert bad.returncode != 0
    assert "studies.s3.claim_settings_only names rsn4ea, which is not in studies.s3.models" in bad.stdout + bad.stderr
    good = dry_run("[bootea]")
    assert good.returncode == 0, good.stderr[-3000:]
    assert "evaluate_s3_model" in good.stdout + good.stderr
