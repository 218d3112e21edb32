import numpy as np
import pytest
from scipy import stats

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.sampled.samplers import SAMPLERS, RelationPositions, draw_candidates

TRAIN = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 2], [4, 0, 5], [1, 1, 0], [2, 1, 3]])
TEST = np.array([[0, 0, 5], [3, 0, 1]])


def _setup():
    known = FilterIndex([TRAIN, TEST], num_entities=8, num_relations=2)
    return known, RelationPositions.fit(TRAIN, 8, 2)


def _draw(sampler, seed, k=8, side="tail"):
    known, positions = _setup()
    anchors = TEST[:, 0] if side == "tail" else TEST[:, 2]
    return draw_candidates(sampler, side, anchors, TEST[:, 1], known, positions, k, np.random.default_rng(seed))


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_no_sampler_draws_a_known_answer(sampler):
    known, _ = _setup()
    for seed in range(20):
        ids = _draw(sampler, seed)
        for row, (h, r, _) in enumerate(TEST):
            drawn = ids[row][ids[row] >= 0]
            assert not known.contains("tail", np.full(len(drawn), h), np.full(len(drawn), r), drawn).any()
            assert len(set(drawn)) == len(drawn)
            assert (ids[row][len(drawn):] == -1).all()  # padding only after the drawn candidates


def test_uniform_draws_every_filtered_candidate_when_k_allows():
    ids = _draw("uniform", 0, k=8)
    # query (0, 0, ?) knows tails 1, 2, 5: the other five entities are all drawn; (3, 0, ?) knows 1, 2
    assert sorted(ids[0][ids[0] >= 0]) == [0, 3, 4, 6, 7]
    assert sorted(ids[1][ids[1] >= 0]) == [0, 3, 4, 5, 6, 7]


def test_uniform_sample_is_uniform_over_the_filtered_candidates():
    """Each filtered candidate is drawn with probability k / #candidates (chi-square over 3,000 draws)."""
    counts = np.zeros(8)
    for seed in range(3000):
        counts[np.bincount(_draw("uniform", seed, k=2)[0], minlength=8) > 0] += 1
    allowed = [0, 3, 4, 6, 7]
    assert counts[[1, 2, 5]].sum() == 0
    assert stats.chisquare(counts[allowed]).pvalue > 1e-3
    assert counts[allowed].sum() == 2 * 3000


def test_probabilistic_first_draw_follows_the_training_frequency():
    """Relation 0's heads in training are 0, 0, 3, 4: the first candidate of the head query (?, 0, 7), which knows no
    answer, is 0 with probability 1/2 and 3 or 4 with 1/4 each (binomial tests over 4,000 draws); query (?, 0, 5)
    knows heads 0 and 4, so its first candidate is always 3."""
    known, positions = _setup()

    def first(tail, seed):
        return draw_candidates("probabilistic", "head", np.array([tail]), np.array([0]), known, positions, 1,
                               np.random.default_rng(seed))[0, 0]

    counts = np.bincount([first(7, seed) for seed in range(4000)], minlength=8)
    assert set(np.flatnonzero(counts)) == {0, 3, 4}
    assert stats.binomtest(int(counts[0]), 4000, 0.5).pvalue > 1e-3
    assert stats.binomtest(int(counts[3]), 4000, 0.25).pvalue > 1e-3
    assert {first(5, seed) for seed in range(50)} == {3}


def test_guided_samplers_draw_only_the_relation_range():
    for sampler in ("static", "probabilistic"):
        ids = _draw(sampler, 0)
        assert set(ids[ids >= 0]) <= {1, 2, 5}  # tails of relation 0 in training


def test_samplers_are_deterministic_by_seed_and_nested():
    assert np.array_equal(_draw("uniform", 3, 5, "head"), _draw("uniform", 3, 5, "head"))
    assert not np.array_equal(_draw("uniform", 3, 5, "head"), _draw("uniform", 4, 5, "head"))
    # the first j of a draw of k are the draw of j from the same stream (nested samples)
    assert np.array_equal(_draw("static", 7, 2), _draw("static", 7, 8)[:, :2])


def test_positions_are_sparse_per_relation():
    _, positions = _setup()
    ids, counts = positions.pool("tail", 0)
    assert ids.tolist() == [1, 2, 5] and counts.tolist() == [1, 2, 1]
    ids, counts = positions.pool("head", 1)
    assert ids.tolist() == [1, 2] and counts.tolist() == [1, 1]


def test_unknown_sampler_names_the_key():
    known, positions = _setup()
    with pytest.raises(ValueError, match="studies.s6.samplers"):
        draw_candidates("hard", "tail", TEST[:, 0], TEST[:, 1], known, positions, 2, np.random.default_rng(0),
                        where="studies.s6.samplers")
