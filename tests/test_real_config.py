"""config/real.yaml (real data on one CPU machine): its dry run plans every study on the real datasets."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, copy_workflow, shared_data_dir
from kgeval.studies import STUDIES

SHARED_DATA = shared_data_dir().resolve()


def test_real_config_covers_what_the_tier_promises():
    config = yaml.safe_load((REPO / "config" / "real.yaml").read_text())
    assert config["results_dir"] == "results/real"
    assert {"fb15k237", "wn18rr"} <= set(config["datasets"])
    assert len({spec["model"] for spec in config["models"].values()}) >= 6
    for key, spec in config["models"].items():
        assert "MRR" in spec["reference"], key
    testsize = config["studies"]["s1"]["testsize"]
    # the authors' test sizes, 1,000 apart up to the pool (14,000 alignments with none used for training)
    assert testsize["test_sizes"] == list(range(1000, 15000, 1000))
    # training sizes from the authors' grid, below and above 10 alignments (Sec. 4's "less than 10")
    paper = {0, 10, 20, 50, 100, 200, 500, 1000, 2000, 3000, 5000, 7500}
    assert set(testsize["num_train"]) <= paper and min(testsize["num_train"]) < 10 < max(testsize["num_train"])
    assert len(testsize["num_train"]) >= 4 and len(testsize["seeds"]) >= 2
    assert config["studies"]["s4"]["released"] == {"fb15k237": "kgc-sparsity"}
    assert config["studies"]["s5"]["datasets"] == ["fb15k237", "wn18rr"]
    # S3 on two pairs, SRPRS en-fr names only (no attribute thresholds)
    assert config["studies"]["s3"]["datasets"] == {"dbp15k_fr_en": {"k1": 21, "k2": 13}, "srprs_en_fr": {}}
    assert config["ea_datasets"]["srprs_en_fr"] == {"source": "srprs", "subset": "en_fr_15k_V1"}


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"no {SHARED_DATA} with the real datasets")
def test_real_config_dry_run_plans_every_study(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile", "config/real.yaml",
         "--config", f"data_dir={SHARED_DATA}"],
        cwd=workdir, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    for study in STUDIES:
        assert f"results/real/claims/{study}.tsv" in out, study
    config = yaml.safe_load((REPO / "config" / "real.yaml").read_text())
    trained = set(re.findall(r"results/real/models/(fb15k237|wn18rr)/([a-z0-9_]+)/0/model\.pt", out))
    assert trained == {(d, m) for d in ("fb15k237", "wn18rr") for m in config["models"]}
    assert "results/real/s4/fb15k237/0/metrics.tsv" in out
    assert "results/real/s3/dbp15k_fr_en/" in out and "results/real/s3/srprs_en_fr/" in out
    assert "results/real/s1/testsize/dbp15k_zh_en/slopes.tsv" in out
    assert not (workdir / "results").exists()
