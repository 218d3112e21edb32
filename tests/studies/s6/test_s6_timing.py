from kgeval.studies.s6.timing import TIMING_COLUMNS, time_run
from s6_samples import TEST, TableModel, TableScorer, settings, setup


def test_timing_rows_for_full_and_each_sampler():
    known, positions = setup()
    table = time_run(TableModel(), TableScorer(), TEST, known, positions, settings(), ("tiny", "m", 0))
    assert list(table.columns) == list(TIMING_COLUMNS)
    assert table["method"].tolist() == ["full", "uniform", "static", "probabilistic"]
    assert (table["seconds"] >= 0).all() and (table["queries"] == 4).all()
