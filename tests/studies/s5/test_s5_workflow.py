"""S5's paper configuration plans the eight datasets of paper 004 (Sec. 6.1) without downloading any of them."""

import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, copy_workflow, shared_data_dir

PAPER_DATASETS = ["biokg", "fb15k", "fb15k237", "hetionet", "nell995", "wn18", "wn18rr", "yago310"]
SHARED_DATA = shared_data_dir().resolve()  # ../shared/data, or $KGEVAL_SHARED_DATA as every other test reads it


def test_paper_config_lists_the_eight_datasets_and_keeps_other_studies_apart():
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    s5 = config["studies"]["s5"]
    assert s5["datasets"] == PAPER_DATASETS and set(PAPER_DATASETS) <= set(config["datasets"])
    assert s5["unavailable_models"] == ["HAKE", "RotPro"]
    assert config["datasets"]["nell995"]["resplit"] == {"valid_fraction": 0.016, "test_fraction": 0.016, "seed": 0}
    # the other studies name their datasets, so S5's six extra datasets are not drawn into them
    s5_only = set(PAPER_DATASETS) - {"fb15k237", "wn18rr"}
    for datasets in (
        config["studies"]["s1"]["ranks"]["datasets"],
        config["studies"]["s2"]["datasets"],
        config["studies"]["s4"]["datasets"],
    ):
        assert datasets is not None and not s5_only & set(datasets)
    assert config["studies"]["s1"]["ranks"]["models"] is not None


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="no ../shared/data with the local FB15k-237 and WN18RR copies")
def test_paper_dry_run_plans_the_eight_datasets_without_downloading(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    home = tmp_path / "pykeen_home"
    home.mkdir()
    env = {**os.environ, "PYKEEN_HOME": str(home), "PYSTOW_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "study_s5", "--configfile", "config/paper.yaml",
         "--config", f"data_dir={SHARED_DATA}"],
        cwd=workdir, capture_output=True, text=True, timeout=600, env=env,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    jobs = set(re.findall(r"results/paper/s5/([a-z0-9_]+)/[a-z0-9_]+/\d+/assessment\.tsv", proc.stdout))
    assert jobs == set(PAPER_DATASETS)
    trained = set(re.findall(r"results/paper/models/([a-z0-9_]+)/", proc.stdout))
    assert trained == set(PAPER_DATASETS)
    # planning downloaded nothing: PyKEEN's cache holds only the empty folders (and README) it makes on import
    assert [p.name for p in home.rglob("*") if p.is_file()] in ([], ["README.md"])
    assert not (workdir / "results").exists()
