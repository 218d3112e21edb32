"""S4 file-level steps end to end on a small brute-force world: labels -> levels -> tables -> figures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.io import read_tsv
from kgeval.lp.ranks import TrainedModel
from kgeval.studies.s4 import figures, jobs
from kgeval.studies.s4.settings import LabelSettings, LevelSettings, StabilitySettings

from test_s4_simulation import topk_table
from test_s4_ranks import World

SYSTEMS = ["sys0", "sys1", "sys2", "sys3"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A files dataset (train/valid/test) and per-system ranks and top-k tables of a brute-force world."""
    root = tmp_path_factory.mktemp("s4")
    world = World(21, num_entities=24, num_true=300)

    def write(path, triples):
        path.write_text("".join(f"{world.entities[h]}\tr{r}\t{world.entities[t]}\n" for h, r, t in triples))

    train = sorted(world.train)
    write(root / "train.txt", train)
    write(root / "valid.txt", train[:3])  # already known through train: the filter is unchanged
    write(root / "test.txt", world.universe)
    ranks, topk = {}, {}
    base_scores = world.scores
    for s, system in enumerate(SYSTEMS):
        noise = World(300 + s, num_entities=24, num_true=300).scores
        world.scores = {k: v + 0.5 * s * noise[k] for k, v in base_scores.items()}
        ranks[system] = root / f"{system}_test.parquet"
        topk[system] = root / f"{system}_topk.parquet"
        world.ranks(set(world.universe)).to_parquet(ranks[system])
        topk_table(world, world.scores, 10).to_parquet(topk[system])
    spec = {
        "source": "files",
        "train": str(root / "train.txt"),
        "valid": str(root / "valid.txt"),
        "test": str(root / "test.txt"),
    }
    return root, spec, ranks, topk


@pytest.mark.slow
def test_jobs_end_to_end(workdir) -> None:
    root, spec, ranks, topk = workdir
    labels = jobs.build_labels(
        dataset_key="world",
        dataset_spec=spec,
        data_dir=None,
        settings=LabelSettings(released=False, release_folder=None, hide_fraction=0.5, seed=0, max_depth=10),
        test_ranks_path=ranks["sys0"],
        topk_paths=topk,
        out=jobs.LabelFiles(
            triples=root / "labels.tsv",
            judgments=root / "judgments.tsv",
            meta=root / "meta.json",
            summary=root / "levels.tsv",
        ),
    )
    assert json.loads((root / "meta.json").read_text())["num_hidden"] == labels.meta["num_hidden"]
    levels = read_tsv(root / "levels.tsv")
    assert list(levels["level"]) == ["original", "sparse"] + [f"depth{d}" for d in range(1, 11)]
    assert levels["num_added"].iloc[-1] > 0

    jobs.compute_categories(
        dataset_key="world",
        dataset_spec=spec,
        data_dir=None,
        threshold=1.5,
        released=False,
        release_folder=None,
        out=root / "categories.tsv",
    )
    metrics = jobs.evaluate_levels(
        triples_path=root / "labels.tsv",
        judgments_path=root / "judgments.tsv",
        ranks_paths=ranks,
        settings=LevelSettings(max_depth=10, rank_type="realistic", hits_at=(1, 3, 10), ir_cutoff=20),
        answers_path=root / "answers.parquet",
        questions_path=root / "questions.parquet",
        metrics_path=root / "metrics.tsv",
    )
    assert set(metrics["system"]) == set(SYSTEMS) and len(set(metrics["level"])) == 12
    # the original level is the plain filtered evaluation of the ranks table
    original = metrics.set_index(["level", "system", "family", "metric"])["value"]
    for system, path in ranks.items():
        table = pd.read_parquet(path)
        assert original[("original", system, "micro", "mrr")] == pytest.approx((1 / table["rank_realistic"]).mean())

    tau = jobs.table_tau_depth(metrics_path=root / "metrics.tsv", out=root / "tau.tsv")
    assert (tau.loc[tau["level"] == "sparse", "tau"].dropna() == 1.0).all()
    table3 = jobs.table_categories(
        answers_path=root / "answers.parquet",
        categories_path=root / "categories.tsv",
        level="pooled",
        max_depth=10,
        hits_at=(1, 3, 10),
        out=root / "table3.tsv",
    )
    assert set(table3["side"]) == {"head", "tail"} and len(table3) == 2 * 4 * 5
    table4 = jobs.table_reweighted(
        answers_path=root / "answers.parquet", level="pooled", max_depth=10, hits_at=(1, 3, 10), out=root / "table4.tsv"
    )
    assert set(table4["distribution"]) == {"complete", "sparse"}
    stability = jobs.table_stability(
        answers_path=root / "answers.parquet",
        questions_path=root / "questions.parquet",
        settings=StabilitySettings(
            levels=["original", "pooled"],
            max_depth=10,
            fractions=[0.2, 0.6, 1.0],
            repeats=4,
            seed=0,
            hits_at=(1, 3, 10),
            ir_cutoff=20,
        ),
        out=root / "stability.tsv",
    )
    full = stability.loc[stability["fraction"] == 1.0, "tau_mean"].dropna()
    assert len(full) and np.allclose(full, 1.0)
    jobs.table_discriminative(
        answers_path=root / "answers.parquet",
        questions_path=root / "questions.parquet",
        levels=["original", "depth10"],
        max_depth=10,
        hits_at=(1, 3, 10),
        ir_cutoff=20,
        permutations=200,
        seed=1,
        out=root / "discriminative.tsv",
    )

    for name, call in {
        "fig3": lambda pdf, png: figures.plot_system_ranking(
            metrics_path=root / "metrics.tsv", dataset="world", pdf=pdf, png=png
        ),
        "fig4": lambda pdf, png: figures.plot_tau_depth(tau_path=root / "tau.tsv", dataset="world", pdf=pdf, png=png),
        "fig5": lambda pdf, png: figures.plot_micro_macro(tau_path=root / "tau.tsv", dataset="world", pdf=pdf, png=png),
        "fig6": lambda pdf, png: figures.plot_relation_mrr(
            answers_path=root / "answers.parquet",
            metrics_path=root / "metrics.tsv",
            system=None,
            dataset="world",
            pdf=pdf,
            png=png,
        ),
        "fig7": lambda pdf, png: figures.plot_stability(
            stability_path=root / "stability.tsv", dataset="world", pdf=pdf, png=png
        ),
        "fig8": lambda pdf, png: figures.plot_discriminative(
            discriminative_path=root / "discriminative.tsv", dataset="world", pdf=pdf, png=png
        ),
    }.items():
        call(root / f"{name}.pdf", root / f"{name}.png")
        assert (root / f"{name}.pdf").stat().st_size > 1000 and (root / f"{name}.png").stat().st_size > 1000


def test_levels_resolve() -> None:
    assert jobs.resolve_level("pooled", 7) == "depth7"
    assert jobs.resolve_level("depth3", 7) == "depth3"
    with pytest.raises(ValueError, match="unknown S4 level"):
        jobs.resolve_level("depth9", 7)


@pytest.mark.slow
def test_universe_ranks_equal_the_engine(tmp_path) -> None:
    """compute_universe_ranks on Nations with the test set as universe = the ranks step's filtered test ranks."""
    ranking = pytest.importorskip("kgeval.lp.ranking", reason="the ranking engine kgeval.lp.ranking is not available")
    from pykeen.models import TransE
    from pykeen.training import SLCWATrainingLoop

    from kgeval.lp.datasets import load_dataset

    spec = {"source": "pykeen", "name": "Nations"}
    data = load_dataset("nations", spec)
    model = TransE(triples_factory=data.training, embedding_dim=8, random_seed=0)
    SLCWATrainingLoop(model=model, triples_factory=data.training, optimizer="Adam").train(
        triples_factory=data.training, num_epochs=2, batch_size=256, use_tqdm=False
    )
    torch.save(model, tmp_path / "model.pt")
    universe = pd.DataFrame(data.testing.triples, columns=["head", "relation", "tail"]).drop_duplicates()
    universe.to_csv(tmp_path / "labels.tsv", sep="\t", index=False)
    table = jobs.compute_universe_ranks(
        TrainedModel(str(tmp_path / "model.pt"), "nations", spec, None),
        labels_path=tmp_path / "labels.tsv",
        out=tmp_path / "ranks.parquet",
        timing_path=tmp_path / "timing.json",
    )
    with torch.no_grad():
        direct = ranking.rank_lp(model, data.testing.mapped_triples, filter_triples=data.all_mapped_triples())
    assert len(table) == 2 * len(universe)
    got = table.set_index(["head", "relation", "tail", "side"]).sort_index()
    for side, res in direct.items():
        ids = data.testing.mapped_triples.numpy()
        e = {v: k for k, v in data.training.entity_to_id.items()}
        r = {v: k for k, v in data.training.relation_to_id.items()}
        keys = [(e[h], r[rr], e[t], side) for h, rr, t in ids]
        np.testing.assert_array_equal(got.loc[keys, "rank_realistic"].to_numpy(), res.rank_realistic)
