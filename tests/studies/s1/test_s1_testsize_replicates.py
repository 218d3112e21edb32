"""S1's sweep replicates against brute-force resamples, through kgeval's own metrics."""

import numpy as np
import pandas as pd
import pytest

from kgeval.metrics import compute_metrics
from kgeval.studies.s1.testsize_replicates import mapping_sums, metrics_of_sums, seed_means, sweep_replicates
from kgeval.uncertainty.resampling import BootstrapSettings, resample_counts, stream_seed

SETTINGS = BootstrapSettings(resamples=6, permutations=10, level=0.95, seed=2)


def _pool(t: int, seed: int, shift: int = 0) -> pd.DataFrame:
    """The first ``t`` test mappings a_i <-> b_i, each ranked in both directions among t candidates."""
    rng = np.random.default_rng(seed)
    r = rng.integers(1, t + 1, 2 * t).astype(float) + np.where(rng.random(2 * t) < 0.2, 0.5, 0.0)
    r = np.minimum(r, t)
    a, b = [f"a{i + shift}" for i in range(t)], [f"b{i + shift}" for i in range(t)]
    return pd.DataFrame({"source": a + b, "target": b + a, "side": ["left"] * t + ["right"] * t,
                         "num_candidates": t, "num_test": t,
                         **{f"rank_{k}": r for k in ("optimistic", "realistic", "pessimistic", "nondeterministic")}})


def _brute(block: pd.DataFrame, weights: dict[tuple[str, str], int]) -> pd.Series:
    """compute_metrics on the rows of the drawn mappings, each repeated as often as it was drawn."""
    key = [(s, t) if side == "left" else (t, s) for s, t, side in zip(block["source"], block["target"], block["side"])]
    repeat = np.array([weights.get(k, 0) for k in key])
    rows = block.loc[block.index.repeat(repeat)].assign(side="head")  # compute_metrics' LP sides
    table = compute_metrics(rows, metrics=["mr", "hits@1", "amr", "amri"])
    return table[(table["side"] == "both") & (table["rank_type"] == "realistic")].set_index("metric")["value"]


def test_metrics_of_mapping_sums_equal_the_metrics_of_the_rows():
    block = _pool(30, 0)
    units, sums = mapping_sums(block)
    weights = np.random.default_rng(1).integers(0, 3, len(units))
    ours = metrics_of_sums(weights @ sums)
    brute = _brute(block, dict(zip(units, weights)))
    for key in ("mr", "hits@1", "amr", "amri"):
        assert ours[key] == pytest.approx(brute[key], rel=1e-12), key


def _write(tmp_path, num_train: int, seed: int, sizes, rank_seed: int | None = None):
    path = tmp_path / "testsize" / "p" / str(num_train) / str(seed) / "ranks.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    rank_seed = seed * 100 + num_train if rank_seed is None else rank_seed
    pd.concat([_pool(t, rank_seed + t) for t in sizes]).to_parquet(path)
    return path


def test_one_draw_of_mappings_serves_every_nested_pool(tmp_path):
    """Replicate j at every size is the brute-force metric of the same drawn mappings, restricted to that pool."""
    path = _write(tmp_path, 5, 0, (10, 20))
    sweep = sweep_replicates([path], SETTINGS)[("p", 5)]
    ranks = pd.read_parquet(path)
    universe = sorted({(f"a{i}", f"b{i}") for i in range(20)})
    counts = np.concatenate(list(resample_counts(len(universe), 6, stream_seed(2, "p", "0"))))
    np.testing.assert_array_equal(sweep.sizes, [10, 20])
    for j in range(6):
        weights = dict(zip(universe, counts[j]))
        for s, t in enumerate((10, 20)):
            brute = _brute(ranks[ranks["num_test"] == t], weights)
            for key in ("mr", "amr", "amri", "hits@1"):
                assert sweep.replicates[key][j, s] == pytest.approx(brute[key], rel=1e-12, nan_ok=True), (j, t, key)
    assert sweep.points["mr"][1] == pytest.approx(_brute(ranks[ranks["num_test"] == 20], dict.fromkeys(universe, 1))["mr"])


def test_training_sizes_of_one_seed_are_resampled_together(tmp_path):
    """Two training sizes with the same ranks on the same mappings: every replicate's difference is exactly 0, while
    the replicates themselves vary."""
    paths = [_write(tmp_path, k, s, (10, 20), rank_seed=7 + s) for k in (0, 5) for s in (0, 1)]
    sweeps = sweep_replicates(paths, SETTINGS)
    first, second = sweeps[("p", 0)].replicates["amr"], sweeps[("p", 5)].replicates["amr"]
    np.testing.assert_array_equal(first, second)
    assert np.std(first[:, 1]) > 0
    assert sweeps[("p", 0)].seeds == 2


def test_seeds_ranking_different_sizes_are_an_error(tmp_path):
    paths = [_write(tmp_path, 5, 0, (10, 20)), _write(tmp_path, 5, 1, (10,))]
    with pytest.raises(ValueError, match="the split seeds rank different test sizes"):
        sweep_replicates(paths, SETTINGS)


def test_a_mapping_ranked_in_one_direction_only_is_an_error():
    with pytest.raises(ValueError, match="1 of 5 test mappings lack one of the 2 directions"):
        mapping_sums(_pool(5, 1).iloc[1:])


def test_one_seed_is_its_own_mean_and_several_seeds_widen_the_spread():
    one = np.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(seed_means([one], 0), one)
    rng = np.random.default_rng(0)
    runs = [rng.normal(loc, 0.1, (2000, 3)) for loc in (0.0, 1.0)]  # two seeds far apart: training variance dominates
    assert (np.std(seed_means(runs, 1), axis=0) > 3 * np.std(np.mean(runs, axis=0), axis=0)).all()
