"""End to end: the workflow on config/test.yaml, checked through the tables it writes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import copy_workflow, run_snakemake
from kgeval.lp.datasets import load_dataset
from kgeval.metrics import compute_metrics

pytestmark = pytest.mark.slow

RANK_COLUMNS = [
    "head",
    "relation",
    "tail",
    "side",
    "rank_optimistic",
    "rank_realistic",
    "rank_pessimistic",
    "rank_nondeterministic",
    "num_candidates",
    "score",
]


def _brute_force_ranks(model, data, triples):
    """Ranks by scoring every candidate with PyKEEN's own score_hrt, one triple at a time (slow, obviously right)."""
    known = {tuple(t) for f in data.all_mapped_triples() for t in f.tolist()}
    out = []
    num_entities = data.num_entities
    for h, r, t in triples.tolist():
        for side in ("head", "tail"):
            cands = torch.arange(num_entities)
            if side == "tail":
                batch = torch.stack([torch.full_like(cands, h), torch.full_like(cands, r), cands], dim=1)
                true = t
            else:
                batch = torch.stack([cands, torch.full_like(cands, r), torch.full_like(cands, t)], dim=1)
                true = h
            with torch.no_grad():
                scores = model.score_hrt(batch).view(-1)
            keep = torch.tensor([(tuple(row) not in known) or (row[0 if side == "head" else 2] == true)
                                 for row in batch.tolist()])
            s = scores[keep]
            ts = scores[true]
            out.append((side, int((s > ts).sum()) + 1, int((s >= ts).sum()), int(keep.sum())))
    return out


def test_ranks_tables(test_workflow):
    results = test_workflow / "results" / "test"
    for dataset in ("nations", "tiny"):
        data = load_dataset(dataset, {"source": "pykeen", "name": "Nations"} if dataset == "nations" else {
            "source": "files", **{s: str(test_workflow / "tests" / "data" / "tiny" / f"{s}.txt")
                                  for s in ("train", "valid", "test")}})
        for split, factory in (("valid", data.validation), ("test", data.testing)):
            ranks = pd.read_parquet(results / "ranks" / dataset / "transe" / "0" / f"{split}.parquet")
            assert list(ranks.columns) == RANK_COLUMNS
            assert len(ranks) == 2 * factory.num_triples
            assert (ranks.rank_optimistic <= ranks.rank_realistic).all()
            assert (ranks.rank_realistic <= ranks.rank_pessimistic).all()
            assert np.allclose(ranks.rank_realistic, (ranks.rank_optimistic + ranks.rank_pessimistic) / 2)
            assert ((ranks.rank_nondeterministic >= ranks.rank_optimistic)
                    & (ranks.rank_nondeterministic <= ranks.rank_pessimistic)).all()
            assert (ranks.rank_pessimistic <= ranks.num_candidates).all()
            assert (ranks.num_candidates <= data.num_entities).all()


def test_ranks_match_brute_force(test_workflow):
    """The ranks written by the workflow equal a per-candidate brute force with the saved model."""
    results = test_workflow / "results" / "test"
    data = load_dataset("tiny", {"source": "files", **{
        s: str(test_workflow / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}})
    model = torch.load(results / "models" / "tiny" / "distmult" / "0" / "model.pt", weights_only=False)
    model.eval()
    ranks = pd.read_parquet(results / "ranks" / "tiny" / "distmult" / "0" / "test.parquet")
    expected = _brute_force_ranks(model, data, data.testing.mapped_triples)
    exp = pd.DataFrame(expected, columns=["side", "opt", "pess", "n"])
    # the table holds all head rows first, then all tail rows, each in triple order
    exp = pd.concat([exp[exp.side == "head"], exp[exp.side == "tail"]], ignore_index=True)
    assert ranks.side.tolist() == exp.side.tolist()
    assert ranks.rank_optimistic.tolist() == exp.opt.tolist()
    assert ranks.rank_pessimistic.tolist() == exp.pess.tolist()
    assert ranks.num_candidates.tolist() == exp.n.tolist()


def test_topk_table(test_workflow):
    topk = pd.read_parquet(test_workflow / "results" / "test" / "ranks" / "nations" / "distmult" / "0" / "topk.parquet")
    assert list(topk.columns) == ["side", "relation", "anchor", "position", "candidate", "score"]
    assert topk.position.max() == 5  # config/test.yaml: top_k 5
    for _, group in topk.groupby(["side", "relation", "anchor"]):
        assert group.position.tolist() == list(range(1, len(group) + 1))
        assert (np.diff(group.score.to_numpy()) <= 1e-6).all()


def test_metrics_tables(test_workflow):
    results = test_workflow / "results" / "test"
    table = pd.read_csv(results / "tables" / "metrics.tsv", sep="\t")
    assert list(table.columns) == [
        "dataset", "model", "seed", "split", "side", "rank_type", "metric", "value", "ci_low", "ci_high", "ci_method"
    ]
    assert set(table.dataset) == {"nations", "tiny"}
    assert set(table.model) == {"transe", "distmult", "complex"}
    assert set(table.side) == {"head", "tail", "both"}
    assert set(table.rank_type) == {"optimistic", "realistic", "pessimistic", "nondeterministic"}
    sorted_table = table.sort_values(list(table.columns[:7])).reset_index(drop=True)
    pd.testing.assert_frame_equal(table, sorted_table)
    # the collated value equals a recomputation from the ranks table
    ranks = pd.read_parquet(results / "ranks" / "nations" / "complex" / "0" / "test.parquet")
    mrr = table.query("dataset == 'nations' and model == 'complex' and split == 'test' and side == 'both' "
                      "and rank_type == 'realistic' and metric == 'mrr'").value.item()
    assert mrr == pytest.approx(np.mean(1.0 / ranks.rank_realistic), rel=1e-9)
    # every value has a bootstrap interval; a mean such as MRR lies inside its own
    finite = table.dropna(subset=["value", "ci_low", "ci_high"])
    assert len(finite) > 0.9 * len(table.dropna(subset=["value"]))
    mrrs = finite[finite.metric == "mrr"]
    assert ((mrrs.ci_low <= mrrs.value + 1e-12) & (mrrs.value <= mrrs.ci_high + 1e-12)).all()
    assert table.ci_method.dropna().str.contains("over test triples").all()  # every interval names its unit
    # the paired comparisons: one row per dataset, split, seed, pair of models and metric
    comparisons = pd.read_csv(results / "tables" / "model_comparisons.tsv", sep="\t")
    assert set(comparisons.metric) == {"mrr", "hits@10", "amri"}
    assert len(comparisons) == 2 * 2 * 3 * 3  # 2 datasets, 2 splits, 3 pairs, 3 metrics
    pair = comparisons.query("dataset == 'nations' and split == 'test' and metric == 'mrr'").iloc[0]
    assert pair.difference == pytest.approx(pair.value_a - pair.value_b)
    assert "one sign per test triple" in pair.ci_method and "not architectures" in pair.ci_method
    # one seed per model: nothing to compare over seeds, a header
    over_seeds = pd.read_csv(results / "tables" / "model_comparisons_over_seeds.tsv", sep="\t")
    assert over_seeds.empty and "p_min" in over_seeds.columns
    again = compute_metrics(ranks)
    assert len(again) > 0
    expectations = pd.read_csv(results / "tables" / "expectations.tsv", sep="\t")
    row = expectations.query("dataset == 'nations' and split == 'test' and side == 'both' and metric == 'mr'")
    assert row.expectation.item() == pytest.approx(np.mean((ranks.num_candidates + 1) / 2), rel=1e-9)


def test_training_outputs(test_workflow):
    folder = test_workflow / "results" / "test" / "models" / "nations" / "transe" / "0"
    losses = pd.read_csv(folder / "losses.tsv", sep="\t")
    assert losses.epoch.tolist() == [1, 2, 3]
    config = json.loads((folder / "config.json").read_text())
    assert config["seed"] == 0 and config["spec"]["model"] == "TransE"
    log = (test_workflow / "results" / "test" / "logs" / "train_model" / "nations" / "transe" / "0.log").read_text()
    assert "epoch 3/3" in log
    summary = pd.read_csv(test_workflow / "results" / "test" / "datasets" / "tiny" / "summary.tsv", sep="\t")
    assert summary.set_index("split").num_triples.to_dict() == {"test": 20, "train": 140, "valid": 20} or \
        summary.num_dropped.sum() > 0


def test_slurm_profile_dry_run(tmp_path):
    workdir = copy_workflow(tmp_path)
    proc = run_snakemake(workdir, "--workflow-profile", "workflow/profiles/slurm", "--dry-run", "--quiet", "rules")
    assert "train_model" in proc.stdout + proc.stderr


def test_failed_job_leaves_no_output(tmp_path):
    """A job that fails (here: a malformed triples file) writes nothing that a rerun would trust."""
    workdir = copy_workflow(tmp_path)
    bad = workdir / "tests" / "data" / "tiny" / "train.txt"
    bad.write_text(bad.read_text() + "broken line without tabs\n")
    import subprocess
    import sys

    proc = subprocess.run(
        # the target goes before --configfile, which takes every following word as a config file
        [sys.executable, "-m", "snakemake", "results/test/datasets/tiny/summary.tsv", "--cores", "1",
         "--configfile", "config/test.yaml"],
        cwd=workdir, capture_output=True, text=True,
    )
    assert proc.returncode != 0
    log = (workdir / "results" / "test" / "logs" / "summarize_dataset" / "tiny.log").read_text()
    assert "train.txt, line 141: expected 3" in log
    assert not (workdir / "results" / "test" / "datasets" / "tiny" / "summary.tsv").exists()
    assert not list((workdir / "results" / "test" / "datasets" / "tiny").glob(".*"))


#: what docutils writes into the console or the HTML for a caption it cannot render
DOCUTILS_PROBLEMS = ("Undefined substitution", "ERROR/3", "WARNING/2", "SEVERE/4", "System Message", "system-message",
                     'class="problematic"')


def test_report_captions_render(test_workflow):
    """The report of the tiny run builds, and no caption has a reStructuredText error (e.g. |S| as a substitution)."""
    proc = run_snakemake(test_workflow, "--report", "report.html", "--configfile", "config/test.yaml")
    html = (test_workflow / "report.html").read_text(errors="replace")
    console = proc.stdout + proc.stderr
    for problem in DOCUTILS_PROBLEMS:
        assert problem not in console, f"{problem!r} in the console of --report:\n{console[-4000:]}"
        assert problem not in html, f"{problem!r} in report.html"
    assert "constant scorer" in html  # a caption made it into the report


def test_console_shows_progress_not_job_details(tmp_path):
    """A job's logging, warnings and epochs go to its log file; the console has Snakemake's progress only."""
    workdir = copy_workflow(tmp_path)
    proc = run_snakemake(workdir, "results/test/ranks/nations/transe/0/test.parquet", "--cores", "2",
                         "--configfile", "config/test.yaml")
    console = proc.stdout + proc.stderr
    assert "3 of 3 steps (100%) done" in console
    for detail in ("epoch 1/3", "kgeval.lp.training", "py.warnings", "pykeen.", " INFO "):
        assert detail not in console, f"{detail!r} on the console:\n{console}"
    log = (workdir / "results" / "test" / "logs" / "train_model" / "nations" / "transe" / "0.log").read_text()
    assert "epoch 1/3" in log and "epoch 3/3" in log


def test_sampled_evaluation_tables(test_workflow):
    """S6 end to end: the full value beside every estimate is the ranking engine's, and the claims table is valid."""
    from kgeval.claims import read_claims

    results = test_workflow / "results" / "test"
    estimates = pd.read_csv(results / "s6" / "tables" / "estimates.tsv", sep="\t")
    metrics = pd.read_csv(results / "tables" / "metrics.tsv", sep="\t")
    metrics = metrics.query("split == 'test' and side == 'both' and rank_type == 'realistic'")
    full = metrics.set_index(["dataset", "model", "metric"])["value"]
    naive = estimates[estimates.estimator == "naive"]
    assert set(naive.k) == {2, 5} and {"uniform", "static", "probabilistic"} <= set(naive.sampler)
    for row in naive[naive.metric.isin(["mrr", "hits@10"])].itertuples():
        assert row.full == pytest.approx(full[row.dataset, row.model, row.metric], rel=1e-6), row
    assert (estimates.error == estimates.estimate - estimates.full).all() or np.allclose(
        estimates.error.dropna(), (estimates.estimate - estimates.full).dropna())
    claims = read_claims(results / "claims" / "s6.tsv")
    assert set(claims.claim) >= {"s6.uniform_overestimates_mrr", "s6.guided_estimates_full_mrr"}
