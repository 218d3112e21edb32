"""The interval of S5's Table 2 overlap (kgeval.studies.s5.overlap): the point value and resamples against
comparison_overlap by brute force, paired resamples, duplicate test triples, mismatched runs, and the written table."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from kgeval.io import read_tsv, write_parquet, write_tsv
from kgeval.studies.s5.overlap import (
    INTERVAL_COLUMNS,
    align_models,
    overlap_interval,
    overlap_intervals,
    overlap_point,
    overlap_replicates,
    triple_posteriors,
    triple_ranks,
)
from kgeval.studies.s5.tables import comparison_overlap, scaled_mr, write_table_comparison
from kgeval.uncertainty.resampling import BootstrapSettings, resample_counts

SETTINGS = BootstrapSettings(resamples=60, permutations=50, level=0.9, seed=5)
SELECTED = "platt(1,0)"
RANK = "rank_realistic"


def split_of(n: int, seed: int, duplicates: int = 2) -> np.ndarray:
    """``n`` test triples (integer ids) of which the last ``duplicates`` repeat earlier ones, in a shuffled order."""
    rng = np.random.default_rng(seed)
    distinct = np.column_stack([rng.permutation(500)[: n - duplicates], rng.integers(0, 3, n - duplicates),
                                rng.integers(0, 500, n - duplicates)])
    triples = np.concatenate([distinct, distinct[:duplicates]])
    return triples[rng.permutation(n)]


def ranks_of(triples: np.ndarray, head: np.ndarray, tail: np.ndarray, seed: int) -> pd.DataFrame:
    """A ranks table of the triples' head and tail queries (ranks ``head``, ``tail`` per triple), rows shuffled."""
    n = len(triples)
    frame = pd.DataFrame(
        {
            "head": np.tile(triples[:, 0], 2),
            "relation": np.tile(triples[:, 1], 2),
            "tail": np.tile(triples[:, 2], 2),
            "side": ["head"] * n + ["tail"] * n,
            "num_candidates": 1000,
            "rank_optimistic": np.floor(np.concatenate([head, tail])),
            RANK: np.concatenate([head, tail]),
            "rank_pessimistic": np.ceil(np.concatenate([head, tail])),
            "rank_nondeterministic": np.floor(np.concatenate([head, tail])),
            "score": 0.0,
        }
    )
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def sums_of(triples: np.ndarray, posterior: np.ndarray) -> pd.DataFrame:
    """A ``triple_sums.parquet`` in the test split's order: the selected calibrator's posteriors and another's."""
    return pd.DataFrame(
        {
            "head": triples[:, 0],
            "relation": triples[:, 1],
            "tail": triples[:, 2],
            f"pos_posterior|{SELECTED}": posterior,
            "pos_posterior|isotonic": 1.0 - posterior,
            f"neg_posterior|{SELECTED}|lcwa": 0.0,
        }
    )


def duplicates_alike(triples: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` with every repeat of a triple given its first occurrence's value (a repeated triple has one score)."""
    first: dict[tuple, float] = {}
    return np.array([first.setdefault(tuple(t), v) for t, v in zip(triples.tolist(), values)])


def models(triples: np.ndarray, count: int, seed: int) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """``count`` models of similar quality: model -> (ranks table, triple sums)."""
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(count):
        head, tail = (duplicates_alike(triples, np.floor(rng.uniform(1, 200, len(triples))) / 2 + 1) for _ in "ht")
        posterior = duplicates_alike(triples, rng.uniform(0, 1, len(triples)))
        out[f"m{k}"] = (ranks_of(triples, head, tail, seed + k), sums_of(triples, posterior))
    return out


def aligned_of(runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]]):
    ranks = {m: triple_ranks(r, "realistic") for m, (r, _) in runs.items()}
    posteriors = {m: triple_posteriors(s, SELECTED) for m, (_, s) in runs.items()}
    return align_models(ranks, posteriors)


def occurrences(frame: pd.DataFrame, by: list[str]) -> list[tuple]:
    """Each row's key ``(head, relation, tail, occurrence)``, counting occurrences per ``by`` in row order."""
    seen: dict[tuple, int] = defaultdict(int)
    keys = []
    for row in frame[by].itertuples(index=False):
        keys.append((int(row.head), int(row.relation), int(row.tail), seen[tuple(row)]))
        seen[tuple(row)] += 1
    return keys


def brute_force(runs: dict, keys: np.ndarray, counts: np.ndarray) -> float:
    """The overlap of one resample (``counts`` per test triple ``keys``) by repeating rows and comparison_overlap."""
    weight = {tuple(k): c for k, c in zip(keys.tolist(), counts)}
    mr, posterior = {}, {}
    for model, (ranks, sums) in runs.items():
        times = [int(weight[k]) for k in occurrences(ranks, ["head", "relation", "tail", "side"])]
        mr[model] = np.mean(np.repeat(ranks[RANK].to_numpy(), times))
        times = [int(weight[k]) for k in occurrences(sums, ["head", "relation", "tail"])]
        posterior[model] = np.mean(np.repeat(sums[f"pos_posterior|{SELECTED}"].to_numpy(), times))
    shared, pairs = comparison_overlap(scaled_mr(pd.Series(mr)), pd.Series(posterior))
    return shared / pairs


def test_point_overlap_is_comparison_overlap_on_the_whole_split():
    triples = split_of(40, 0)
    runs = models(triples, 5, 1)
    aligned = aligned_of(runs)
    mr = pd.Series({m: r[RANK].mean() for m, (r, _) in runs.items()})
    posterior = pd.Series({m: s[f"pos_posterior|{SELECTED}"].mean() for m, (_, s) in runs.items()})
    shared, pairs = comparison_overlap(scaled_mr(mr), posterior)
    assert overlap_point(aligned) == shared / pairs
    assert aligned.models == tuple(sorted(runs)) and aligned.rank_sums.shape == (40, 5)


def test_resamples_against_repeated_rows():
    triples = split_of(30, 2)
    runs = models(triples, 4, 3)
    aligned = aligned_of(runs)
    n = len(aligned.keys)
    rng = np.random.default_rng(4)
    explicit = [rng.multinomial(n, np.full(n, 1 / n)) for _ in range(6)]
    explicit.append(np.bincount(rng.integers(0, 3, n), minlength=n))  # three triples only
    explicit.append(np.ones(n, dtype=int))
    counts = np.vstack([np.array(explicit, dtype=float), next(resample_counts(n, 10, 7))])
    got = overlap_replicates(aligned, counts)
    expected = [brute_force(runs, aligned.keys, c) for c in counts]
    assert list(got) == expected
    assert len(set(expected)) > 1  # the resamples do move the overlap


def test_models_draw_the_same_triples():
    # each model ranks every query one worse than the last and gives every triple a lower posterior: on resamples of
    # the same triples both orders agree on every pair, on independent ones they would often not
    triples = split_of(50, 5, duplicates=0)
    rng = np.random.default_rng(6)
    head, tail, posterior = rng.uniform(1, 2000, 50), rng.uniform(1, 2000, 50), rng.uniform(0.3, 1.0, 50)
    runs = {
        f"m{k}": (ranks_of(triples, head + k, tail + k, k), sums_of(triples, posterior - 0.1 * k)) for k in range(3)
    }
    aligned = aligned_of(runs)
    assert overlap_point(aligned) == 1.0
    assert overlap_interval(aligned, SETTINGS, "d", 0) == (1.0, 1.0)
    # the reversed posterior order disagrees on every pair, on every resample
    runs = {m: (r, sums_of(triples, 1.0 - s[f"pos_posterior|{SELECTED}"].to_numpy())) for m, (r, s) in runs.items()}
    assert overlap_interval(aligned_of(runs), SETTINGS, "d", 0) == (0.0, 0.0)
    single = aligned_of({"m0": runs["m0"]})
    assert np.isnan(overlap_interval(single, SETTINGS, "d", 0)).all()


def test_a_repeated_test_triple_is_two_units():
    triples = split_of(12, 8, duplicates=1)
    runs = models(triples, 3, 9)
    ranks = triple_ranks(runs["m0"][0], "realistic")
    assert len(ranks) == 12 and (ranks["rank_count"] == 2).all()
    assert sorted(ranks["occurrence"].value_counts().to_dict().items()) == [(0, 11), (1, 1)]
    aligned = aligned_of(runs)
    assert len(aligned.keys) == 12
    twice = np.flatnonzero(aligned.keys[:, 3] == 1)[0]
    first = np.flatnonzero((aligned.keys[:, :3] == aligned.keys[twice, :3]).all(axis=1) & (aligned.keys[:, 3] == 0))[0]
    counts = np.ones((2, 12))
    counts[0, [twice, first]] = [0, 2]  # one occurrence drawn twice, the other not
    counts[1, [twice, first]] = [2, 0]
    got = overlap_replicates(aligned, counts)
    assert list(got) == [brute_force(runs, aligned.keys, c) for c in counts]
    # the point value weighs the repeated triple twice, as the whole ranks table does
    np.testing.assert_allclose(aligned.rank_sums.sum(axis=0) / aligned.rank_counts.sum(axis=0),
                               [runs[m][0][RANK].mean() for m in aligned.models])


def positives_of(ranks: pd.DataFrame, sums: pd.DataFrame) -> pd.DataFrame:
    """A run's ``positives.parquet``: its test triples in the order of ``sums`` with their ranks per side."""
    keys = ["head", "relation", "tail"]
    frame = sums[keys].copy()
    occurrence = frame.groupby(keys, sort=False).cumcount()
    for side in ("head", "tail"):
        part = ranks[ranks["side"] == side]
        part = part.assign(occurrence=part.groupby(keys, sort=False).cumcount())
        merged = frame.assign(occurrence=occurrence).merge(part, on=[*keys, "occurrence"], how="left")
        frame[f"rank_{side}"] = merged[RANK].to_numpy()
    return frame


def write_runs(root, runs: dict, dataset: str, seed: int) -> tuple[list[str], list[str]]:
    ranks_paths, sums_paths = [], []
    for model, (ranks, sums) in runs.items():
        rank_path = root / "s5" / dataset / model / str(seed) / "positives.parquet"
        sums_path = root / "s5" / dataset / model / str(seed) / "triple_sums.parquet"
        for path, frame in ((rank_path, positives_of(ranks, sums)), (sums_path, sums)):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(frame, path)
        ranks_paths.append(str(rank_path))
        sums_paths.append(str(sums_path))
    return ranks_paths, sums_paths


def per_model_of(runs: dict, dataset: str, seed: int) -> pd.DataFrame:
    return pd.DataFrame({"dataset": dataset, "seed": seed, "model": list(runs), "calibrator": SELECTED})


def test_mismatched_test_triples_name_the_file(tmp_path):
    triples = split_of(20, 10)
    runs = models(triples, 3, 11)
    other = triples.copy()
    other[0, 2] += 1000  # a test triple the other models do not have
    ranks, sums = runs["m2"]
    runs["m2"] = (ranks, sums_of(other, sums[f"pos_posterior|{SELECTED}"].to_numpy()))
    ranks_paths, sums_paths = write_runs(tmp_path, runs, "d", 0)
    with pytest.raises(ValueError, match=r"s5/d/m2/0/(positives|triple_sums)\.parquet: .*same test split"):
        overlap_intervals(per_model_of(runs, "d", 0), ranks_paths, sums_paths, "realistic", SETTINGS)
    runs["m2"] = (ranks_of(other, np.ones(20), np.ones(20), 0), sums_of(other, sums[f"pos_posterior|{SELECTED}"]))
    ranks_paths, sums_paths = write_runs(tmp_path, runs, "d", 0)
    with pytest.raises(ValueError, match=r"s5/d/m2/0/positives\.parquet: .*rerun"):
        overlap_intervals(per_model_of(runs, "d", 0), ranks_paths, sums_paths, "realistic", SETTINGS)
    with pytest.raises(ValueError, match=r"run d/m2/0: no triple_sums\.parquet"):
        overlap_intervals(per_model_of(runs, "d", 0), ranks_paths, sums_paths[:2], "realistic", SETTINGS)


def test_table2_overlap_gets_the_interval(tmp_path):
    runs = {"d1": models(split_of(30, 12), 3, 13), "d2": models(split_of(10, 14), 1, 15)}
    ranks_paths, sums_paths, summary, assessment = [], [], [], []
    for dataset, found in runs.items():
        paths = write_runs(tmp_path, found, dataset, 0)
        ranks_paths += paths[0]
        sums_paths += paths[1]
        for model, (ranks, sums) in found.items():
            summary.append((dataset, model, "TransE", 0, "mr", ranks[RANK].mean()))
            value = sums[f"pos_posterior|{SELECTED}"].mean()
            assessment.append((dataset, model, "TransE", 0, SELECTED, True, "lcwa", "mean_posterior", value))
    write_tsv(pd.DataFrame(summary, columns=["dataset", "model", "model_class", "seed", "metric", "value"]),
              tmp_path / "summary.tsv")
    columns = ["dataset", "model", "model_class", "seed", "calibrator", "selected", "strategy", "metric", "value"]
    write_tsv(pd.DataFrame(assessment, columns=columns), tmp_path / "assessment.tsv")
    outputs = {"comparison": tmp_path / "comparison.tsv", "overlap": tmp_path / "overlap.tsv"}
    uncertainty = {"resamples": SETTINGS.resamples, "permutations": 50, "level": SETTINGS.level, "seed": SETTINGS.seed}
    write_table_comparison(tmp_path / "summary.tsv", tmp_path / "assessment.tsv", outputs, uncertainty=uncertainty,
                           run_files={"positives": ranks_paths, "triple_sums": sums_paths}, rank_type="realistic")
    table = read_tsv(outputs["overlap"]).set_index("dataset")
    assert set(INTERVAL_COLUMNS) <= set(table.columns)
    d1 = table.loc["d1"]
    assert 0.0 <= d1.overlap_low <= d1.overlap_high <= 1.0 and d1.overlap_resamples == SETTINGS.resamples
    aligned = aligned_of(runs["d1"])
    assert d1.overlap == pytest.approx(overlap_point(aligned))
    assert (d1.overlap_low, d1.overlap_high) == pytest.approx(overlap_interval(aligned, SETTINGS, "d1", 0))
    d2 = table.loc["d2"]
    assert np.isnan(d2.overlap_low) and np.isnan(d2.overlap_high) and d2.overlap_resamples == 0
    with pytest.raises(ValueError, match="run_files need positives and triple_sums, and the rank_type"):
        write_table_comparison(tmp_path / "summary.tsv", tmp_path / "assessment.tsv", outputs,
                               uncertainty=uncertainty, run_files={"triple_sums": sums_paths}, rank_type="realistic")


def test_a_run_without_its_ranks_in_positives_is_refused(tmp_path):
    triples = split_of(10, 16, duplicates=0)
    runs = models(triples, 2, 17)
    ranks_paths, sums_paths = write_runs(tmp_path, runs, "d", 0)
    write_parquet(pd.read_parquet(ranks_paths[1]).drop(columns=["rank_head", "rank_tail"]), ranks_paths[1])
    with pytest.raises(ValueError, match=r"s5/d/m1/0/positives\.parquet: no rank_head and rank_tail.*rerun"):
        overlap_intervals(per_model_of(runs, "d", 0), ranks_paths, sums_paths, "realistic", SETTINGS)
