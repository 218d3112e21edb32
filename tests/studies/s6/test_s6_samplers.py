import numpy as np
import pytest

from kgeval.lp.filtering import FilterIndex
from kgeval.studies.s6.samplers import SAMPLERS, RelationPositions, draw_candidates, sample_keys

TRAIN = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 2], [4, 0, 5], [1, 1, 0], [2, 1, 3]])
TEST = np.array([[0, 0, 5], [3, 0, 1]])


def _setup():
    known = FilterIndex([TRAIN, TEST], num_entities=8, num_relations=2)
    return known, RelationPositions.fit(TRAIN, 8, 2)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_no_sampler_draws_a_known_answer(sampler):
    known, positions = _setup()
    for seed in range(20):
        keys = sample_keys(sampler, "tail", TEST[:, 0], TEST[:, 1], known, positions, np.random.default_rng(seed))
        ids = draw_candidates(keys, 8)
        for row, (h, r, _) in enumerate(TEST):
            drawn = ids[row][ids[row] >= 0]
            assert not known.contains("tail", np.full(len(drawn), h), np.full(len(drawn), r), drawn).any()
            assert len(set(drawn)) == len(drawn)


def test_guided_samplers_draw_only_the_relation_range():
    known, positions = _setup()
    for sampler in ("static", "probabilistic"):
        keys = sample_keys(sampler, "tail", TEST[:, 0], TEST[:, 1], known, positions, np.random.default_rng(0))
        ids = draw_candidates(keys, 8)
        assert set(ids[ids >= 0]) <= {1, 2, 5}  # tails of relation 0 in training


def test_samplers_are_deterministic_by_seed_and_nested():
    known, positions = _setup()
    draw = lambda seed: draw_candidates(  # noqa: E731
        sample_keys("uniform", "head", TEST[:, 2], TEST[:, 1], known, positions, np.random.default_rng(seed)), 5)
    assert np.array_equal(draw(3), draw(3))
    assert not np.array_equal(draw(3), draw(4))


def test_unknown_sampler_names_the_key():
    known, positions = _setup()
    with pytest.raises(ValueError, match="studies.s6.samplers"):
        sample_keys("hard", "tail", TEST[:, 0], TEST[:, 1], known, positions, np.random.default_rng(0))
