"""kgeval.lp.sampled.jobs: a PyKEEN model on tests/data/tiny evaluated with a sample of every candidate gives the
metrics of its full ranks table (kgeval.lp.ranks), and the collated table keeps every row."""

import numpy as np
import pandas as pd
import torch
from pykeen.models import DistMult

from conftest import REPO
from kgeval.io import read_tsv
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranks import TrainedModel, compute_ranks
from kgeval.lp.sampled.counts import SampledCandidates
from kgeval.lp.sampled.estimates import ESTIMATE_COLUMNS
from kgeval.lp.sampled.jobs import collate_sampled_metrics, evaluate_sampled
from kgeval.uncertainty.resampling import BootstrapSettings

SPEC = {"source": "files", **{s: str(REPO / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}}
BOOT = BootstrapSettings(resamples=50, permutations=10, level=0.95, seed=0)


def test_a_sample_of_every_candidate_matches_the_full_ranks_table(tmp_path):
    data = load_dataset("tiny", SPEC)
    model = DistMult(triples_factory=data.training, embedding_dim=8, random_seed=3).eval()
    path = tmp_path / "model.pt"
    torch.save(model, path)
    splits = ["valid", "test"]
    outputs = {kind: [tmp_path / f"{s}.{ext}" for s in splits] for kind, ext in (("counts", "parquet"), ("metrics", "tsv"))}
    evaluate_sampled(path, ("tiny", SPEC, None), ("distmult", 0), splits,
                     (SampledCandidates("uniform", data.num_entities, 0), BOOT), outputs)
    compute_ranks(TrainedModel(str(path), "tiny", SPEC, None), splits=["test"], ranks_paths=[tmp_path / "ranks.parquet"],
                  topk_path=tmp_path / "topk.parquet", timing_path=tmp_path / "timing.json", top_k=2)
    ranks = pd.read_parquet(tmp_path / "ranks.parquet")
    table = read_tsv(outputs["metrics"][1])
    for rank_type in ("optimistic", "realistic", "pessimistic"):
        full = ranks[f"rank_{rank_type}"].to_numpy(float)
        row = table[(table.side == "both") & (table.rank_type == rank_type) & (table.estimator == "scaled")]
        values = dict(zip(row["metric"], row["value"]))
        # score_hrt and the ranking engine's score rows agree up to float rounding, so ties may split differently
        assert np.isclose(values["mr"], full.mean(), rtol=1e-3)
        assert np.isclose(values["mrr"], (1 / full).mean(), rtol=1e-2)
    collated = collate_sampled_metrics([outputs["metrics"][0], outputs["metrics"][1]], tmp_path / "all.tsv")
    assert list(read_tsv(tmp_path / "all.tsv").columns) == list(ESTIMATE_COLUMNS)
    assert sorted(set(collated["split"])) == sorted(splits)


def test_collating_nothing_writes_the_header(tmp_path):
    collate_sampled_metrics([], tmp_path / "none.tsv")
    assert (tmp_path / "none.tsv").read_text().strip().split("\t") == list(ESTIMATE_COLUMNS)
