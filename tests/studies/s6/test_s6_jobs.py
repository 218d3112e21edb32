import pandas as pd

from kgeval.claims import read_claims
from kgeval.io import write_parquet
from kgeval.studies.s6.evaluation import draw_samples, full_and_sampled
from kgeval.studies.s6.jobs import plot_estimates_file, plot_tau_file, table_claims, table_estimates, table_ordering
from kgeval.uncertainty.resampling import BootstrapSettings
from s6_samples import TEST, TableScorer, settings, setup


def test_tables_figures_and_claims_from_the_evaluation_files(tmp_path):
    s = settings()
    known, positions = setup()
    samples = draw_samples(TEST, known, positions, s, "tiny")
    fulls, sampleds = [], []
    for model in ("a", "b"):
        f, x = full_and_sampled(TableScorer(), TEST, known, samples, s, model)
        fulls.append(f.assign(dataset="tiny", seed=0))
        sampleds.append(x.assign(dataset="tiny", seed=0))
    write_parquet(pd.concat(fulls), tmp_path / "full.parquet")
    write_parquet(pd.concat(sampleds), tmp_path / "sampled.parquet")
    out = {n: tmp_path / f"{n}.out" for n in ("estimates", "replicates", "sizes")}
    table_estimates([tmp_path / "full.parquet"], [tmp_path / "sampled.parquet"], s, BootstrapSettings(20, 10, 0.95, 0), out)
    table_ordering(out["estimates"], out["replicates"], 0.95, tmp_path / "ordering.tsv")
    plot_estimates_file(out["estimates"], tmp_path / "e.pdf", tmp_path / "e.png")
    plot_tau_file(tmp_path / "ordering.tsv", tmp_path / "t.pdf", tmp_path / "t.png")
    table_claims(out["replicates"], tmp_path / "ordering.tsv", out["sizes"], 0.05, 0.95, tmp_path / "s6.tsv")
    assert len(read_claims(tmp_path / "s6.tsv")) == 5
