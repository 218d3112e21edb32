import numpy as np

from kgeval.studies.s6.evaluation import draw_samples, full_and_sampled, query_batches
from s6_samples import TEST, TableScorer, settings, setup


def test_batches_cover_every_query():
    batches = query_batches(10, 1000, 0.1)
    assert sum(b.stop - b.start for b in batches) == 10


def test_a_sample_of_every_candidate_gives_the_full_rank():
    known, positions = setup()
    s = settings(ks=(8,), samplers=("uniform",))
    samples = draw_samples(TEST, known, positions, s, "tiny")
    full, sampled = full_and_sampled(TableScorer(), TEST, known, samples, s, "m")
    merged = sampled.merge(full, on=["model", "side", "query"])
    assert (merged["drawn_8"] == merged["num_candidates"] - 1).all()
    assert np.allclose(1 + merged["better_8"], merged["rank"])


def test_the_samples_are_the_same_for_every_call():
    known, positions = setup()
    a = draw_samples(TEST, known, positions, settings(), "tiny")
    b = draw_samples(TEST, known, positions, settings(), "tiny")
    assert all(np.array_equal(a[key], b[key]) for key in a)
