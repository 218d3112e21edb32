"""S3 pipeline steps, file in / file out: features, seed sets, runs of the training-free name baseline, collation and
the paper's tables, on the bundled Nations pair and on hand-made tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import synthetic_pair
from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s3.jobs import (
    RANKS_COLUMNS,
    MethodRun,
    RunFiles,
    SeedFiles,
    SettingInputs,
    collate_bias_to_file,
    collate_tables_to_file,
    collate_to_files,
    evaluate_model_to_files,
    features_to_files,
    run_to_files,
    seed_sets_to_files,
    tables_to_files,
)
from kgeval.studies.s3.sampling import seed_set_sizes

KEY = "nations_two_view"
SPEC = {"source": "two_view", "dataset": "nations", "keep_fraction": 0.6, "seed": 0}
SETTINGS = {"k1": 130, "k2": 100, "name_noise": {"missing": 0.2, "edited": 0.3, "max_edits": 2, "seed": 0}}


def test_steps_end_to_end_on_nations(tmp_path):
    """Features -> seed sets -> name baseline on every setting -> collated tables, all on files."""
    key, spec = "nations_two_view", {"source": "two_view", "dataset": "nations", "keep_fraction": 0.6, "seed": 0}
    settings = {"k1": 130, "k2": 100, "name_noise": {"missing": 0.2, "edited": 0.3, "max_edits": 2, "seed": 0}}
    features = features_to_files(key, spec, settings, None, tmp_path / "features.tsv", tmp_path / "sizes.tsv")
    assert len(features) == len(read_tsv(tmp_path / "features.tsv"))
    seed_dir = tmp_path / key / "seeds" / "0"
    seed_sets_to_files(
        tmp_path / "features.tsv", ["none", "both"], [0.2, 0.5], 0.5, 0,
        seed_dir / "seeds.tsv", seed_dir / "status.tsv", seed_dir / "bias.tsv",
    )
    runs = [tmp_path / key / "runs" / "name_similarity" / b / r / "0" for b in ("none", "both") for r in ("0.2", "0.5")]
    evaluate_model_to_files(
        key, spec, settings, None,
        SeedFiles(tmp_path / "features.tsv", seed_dir / "seeds.tsv", seed_dir / "status.tsv"),
        MethodRun("name_similarity", {}, 0),
        RunFiles(
            [r / "ranks.parquet" for r in runs], [r / "split_metrics.tsv" for r in runs],
            [r / "status.json" for r in runs],
        ),
    )
    for run in runs:
        status = json.loads((run / "status.json").read_text())
        ranks = pd.read_parquet(run / "ranks.parquet")
        assert status["status"] == "ok" and len(ranks) == 2 * status["num_test"]
        assert status["num_train"] + status["num_valid"] + status["num_test"] == len(features)
        # no seed mapping is ranked
        seeds = read_tsv(seed_dir / "seeds.tsv")
        setting = seeds[(seeds["bias"] == run.parts[-3]) & np.isclose(seeds["train_ratio"], float(run.parts[-2]))]
        assert not set(map(tuple, setting[["id1", "id2"]].to_numpy())) & set(map(tuple, ranks[["id1", "id2"]].to_numpy()))
    collate_to_files(
        [r / "split_metrics.tsv" for r in runs], [r / "status.json" for r in runs],
        tmp_path / "metrics.tsv", tmp_path / "runs.tsv",
    )
    t2 = tables_to_files(
        tmp_path / "metrics.tsv", tmp_path / "runs.tsv", tmp_path / "t2.tsv", "table2",
        {"bias": "none", "train_ratio": 0.2}, {"bias": "both", "train_ratio": 0.5}, ["name_similarity"],
    )
    assert t2["context"].tolist() == ["ideal", "industrial"]
    # the name baseline finds every "same" mapping whose name is unique (realistic ranks: ties share the rank)
    assert (t2["hits@1_same"] > 0.5).all()
    t3 = tables_to_files(
        tmp_path / "metrics.tsv", tmp_path / "runs.tsv", tmp_path / "t3.tsv", "table3",
        {"bias": "none", "train_ratio": 0.2}, {"bias": "both", "train_ratio": 0.5}, ["name_similarity"],
    )
    assert len(t3) == 4 and (t3["n_all"] > 0).all()


def test_attribute_settings_are_skipped_not_faked(tmp_path):
    features = pd.DataFrame(
        {
            "id1": range(20),
            "id2": range(20),
            "s_name": np.linspace(0, 1, 20),
            "n_attr": np.nan,
            "name_split": ["same"] * 5 + ["close"] * 15,
            "attr_split": [None] * 20,
        }
    )
    features.to_csv(tmp_path / "features.tsv", sep="\t", index=False)
    seed_sets_to_files(
        tmp_path / "features.tsv", ["name", "attr", "both"], [0.2], 0.5, 0,
        tmp_path / "seeds.tsv", tmp_path / "status.tsv", tmp_path / "bias.tsv",
    )
    status = read_tsv(tmp_path / "status.tsv").set_index("bias")
    assert status.loc["name", "status"] == "ok"
    for bias in ("attr", "both"):
        assert status.loc[bias, "status"] == "skipped"
        assert "attribute" in status.loc[bias, "reason"] and "not faked" in status.loc[bias, "reason"]
    assert set(read_tsv(tmp_path / "seeds.tsv")["bias"]) == {"name"}


def _features(n: int = 40, attributes: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "id1": np.arange(n),
            "id2": np.arange(n)[::-1] + 100,
            "s_name": rng.random(n),
            "n_attr": rng.integers(0, 9, n).astype(float) if attributes else np.nan,
            "name_split": rng.choice(["same", "close", "different"], n),
            "attr_split": rng.choice(["small", "medium", "large"], n) if attributes else [None] * n,
        }
    )


def test_seed_sets_sizes_and_roles(tmp_path):
    features = _features(40)
    features.to_csv(tmp_path / "features.tsv", sep="\t", index=False)
    seeds = seed_sets_to_files(
        tmp_path / "features.tsv", ["none", "both"], [0.1, 0.3], 0.5, 7,
        tmp_path / "seeds.tsv", tmp_path / "status.tsv", tmp_path / "bias.tsv",
    )
    status = read_tsv(tmp_path / "status.tsv").set_index(["bias", "train_ratio"])
    pairs = set(zip(features["id1"], features["id2"]))
    for bias in ("none", "both"):
        for ratio in (0.1, 0.3):
            n_train, n_valid = seed_set_sizes(40, ratio, 0.5)
            row = status.loc[(bias, ratio)]
            assert (row["status"], row["num_train"], row["num_valid"]) == ("ok", n_train, n_valid)
            assert row["num_train"] + row["num_valid"] + row["num_test"] == 40
            part = seeds[(seeds["bias"] == bias) & (seeds["train_ratio"] == ratio)]
            assert (part["role"] == "train").sum() == n_train and (part["role"] == "valid").sum() == n_valid
            chosen = list(zip(part["id1"], part["id2"]))
            assert len(set(chosen)) == len(chosen) and set(chosen) <= pairs  # real mappings, each at most once
    back = read_tsv(tmp_path / "seeds.tsv")
    assert len(back) == len(seeds)
    # the same seed gives the same seed sets
    again = seed_sets_to_files(
        tmp_path / "features.tsv", ["none", "both"], [0.1, 0.3], 0.5, 7,
        tmp_path / "s2.tsv", tmp_path / "st2.tsv", tmp_path / "b2.tsv",
    )
    pd.testing.assert_frame_equal(again, seeds)
    bias = read_tsv(tmp_path / "bias.tsv")
    assert {"bias", "train_ratio", "role"} <= set(bias.columns) and set(bias["bias"]) == {"none", "both"}


def test_skipped_setting_writes_empty_outputs_and_the_reason(tmp_path):
    s3pair = synthetic_pair(n=10, m=30)
    features = _features(10, attributes=False)
    status = pd.DataFrame(
        [("attr", 0.2, "skipped", "no attributes; the attribute split is skipped, not faked", 2, 1, 7)],
        columns=["bias", "train_ratio", "status", "reason", "num_train", "num_valid", "num_test"],
    )
    inputs = SettingInputs(s3pair, features, pd.DataFrame(columns=["bias", "train_ratio", "role", "id1", "id2"]),
                           status)
    files = RunFiles(tmp_path / "ranks.parquet", tmp_path / "metrics.tsv", tmp_path / "status.json")
    result = run_to_files(inputs, MethodRun("name_similarity", {}, 3), "attr", 0.2, files)
    written = json.loads((tmp_path / "status.json").read_text())
    assert written == json.loads(json.dumps(result))
    assert written["status"] == "skipped" and "not faked" in written["reason"]
    assert (written["num_train"], written["num_valid"], written["num_test"], written["seed"]) == (2, 1, 7, 3)
    ranks = pd.read_parquet(tmp_path / "ranks.parquet")
    assert ranks.empty and list(ranks.columns) == list(RANKS_COLUMNS)
    assert read_tsv(tmp_path / "metrics.tsv").empty
    with pytest.raises(ValueError, match="hold no setting bias=none, train_ratio=0.5"):
        run_to_files(inputs, MethodRun("name_similarity", {}, 3), "none", 0.5, files)


def test_one_direction_ranks_only_that_side(tmp_path):
    """A run with ``side=left`` ranks graph 1 -> graph 2 only; its test mappings are every mapping not in the seeds."""
    s3pair = synthetic_pair(n=30, m=120)
    alignment = s3pair.pair.alignment
    features = pd.DataFrame({"id1": alignment[:, 0], "id2": alignment[:, 1], "s_name": 1.0, "n_attr": np.nan,
                             "name_split": "close", "attr_split": None})
    seeds = pd.DataFrame({"bias": "none", "train_ratio": 0.2, "role": ["train"] * 6 + ["valid"] * 3,
                          "id1": alignment[:9, 0], "id2": alignment[:9, 1]})
    status = pd.DataFrame([("none", 0.2, "ok", "", 6, 3, 21)],
                          columns=["bias", "train_ratio", "status", "reason", "num_train", "num_valid", "num_test"])
    files = RunFiles(tmp_path / "ranks.parquet", tmp_path / "metrics.tsv", tmp_path / "status.json")
    result = run_to_files(SettingInputs(s3pair, features, seeds, status),
                          MethodRun("name_similarity", {}, 0, side="left"), "none", 0.2, files)
    ranks = pd.read_parquet(tmp_path / "ranks.parquet")
    assert set(ranks["side"]) == {"left"} and len(ranks) == 21
    assert set(zip(ranks["id1"], ranks["id2"])) == set(map(tuple, alignment[9:].tolist()))
    assert set(read_tsv(tmp_path / "metrics.tsv")["side"]) == {"left"}
    assert result["status"] == "ok" and result["side"] == "left" and 0.0 <= result["valid_hits_at_1"] <= 1.0


def test_a_method_limited_to_the_claim_settings_skips_the_others(tmp_path):
    """``studies.s3.claim_settings_only``: a setting outside the method's list is written as skipped (empty tables,
    the key named in the reason); a listed one runs as before."""
    s3pair = synthetic_pair(n=30, m=120)
    alignment = s3pair.pair.alignment
    features = pd.DataFrame({"id1": alignment[:, 0], "id2": alignment[:, 1], "s_name": 1.0, "n_attr": np.nan,
                             "name_split": "close", "attr_split": None})
    seeds = pd.concat([
        pd.DataFrame({"bias": "none", "train_ratio": ratio, "role": ["train"] * 6 + ["valid"] * 3,
                      "id1": alignment[:9, 0], "id2": alignment[:9, 1]})
        for ratio in (0.2, 0.04)
    ])
    status = pd.DataFrame([("none", r, "ok", "", 6, 3, 21) for r in (0.2, 0.04)],
                          columns=["bias", "train_ratio", "status", "reason", "num_train", "num_valid", "num_test"])
    inputs = SettingInputs(s3pair, features, seeds, status)
    method = MethodRun("name_similarity", {}, 0, side="left", settings=(("none", 0.2),))
    assert method.runs("none", 0.2) and not method.runs("none", 0.04) and not method.runs("name", 0.2)
    def files(stem: str) -> RunFiles:
        return RunFiles(*(tmp_path / f"{stem}.{x}" for x in ("parquet", "tsv", "json")))

    ran = run_to_files(inputs, method, "none", 0.2, files("a"))
    skipped = run_to_files(inputs, method, "none", 0.04, files("b"))
    assert ran["status"] == "ok" and len(pd.read_parquet(tmp_path / "a.parquet")) == 21
    assert skipped["status"] == "skipped" and "studies.s3.claim_settings_only" in skipped["reason"]
    assert pd.read_parquet(tmp_path / "b.parquet").empty and read_tsv(tmp_path / "b.tsv").empty
    assert json.loads((tmp_path / "b.json").read_text())["num_test"] == 21


def test_evaluate_checks_the_run_paths(tmp_path):
    method = MethodRun("name_similarity", {}, 0)
    seeds = SeedFiles(tmp_path / "f.tsv", tmp_path / "s.tsv", tmp_path / "st.tsv")
    run = tmp_path / KEY / "runs" / "name_similarity" / "none" / "0.2" / "0"
    with pytest.raises(ValueError, match="path lists differ in length"):
        evaluate_model_to_files(KEY, SPEC, SETTINGS, None, seeds, method,
                                RunFiles([run / "ranks.parquet"], [], [run / "status.json"]))
    features_to_files(KEY, SPEC, SETTINGS, None, tmp_path / "f.tsv", tmp_path / "sizes.tsv")
    seed_sets_to_files(tmp_path / "f.tsv", ["none"], [0.2], 0.5, 0, tmp_path / "s.tsv", tmp_path / "st.tsv",
                       tmp_path / "b.tsv")
    other = tmp_path / KEY / "runs" / "name_similarity" / "none" / "0.5" / "0"
    with pytest.raises(ValueError, match="do not name the same run"):
        evaluate_model_to_files(KEY, SPEC, SETTINGS, None, seeds, method,
                                RunFiles([run / "ranks.parquet"], [other / "m.tsv"], [run / "status.json"]))
    wrong = tmp_path / KEY / "runs" / "gcn_align" / "none" / "0.2" / "0"
    with pytest.raises(ValueError, match="is not a run of dataset nations_two_view, model name_similarity, seed 0"):
        evaluate_model_to_files(KEY, SPEC, SETTINGS, None, seeds, method,
                                RunFiles([wrong / "r.parquet"], [wrong / "m.tsv"], [wrong / "s.json"]))


def test_features_and_split_sizes(tmp_path):
    features = features_to_files(KEY, SPEC, SETTINGS, None, tmp_path / "f.tsv", tmp_path / "sizes.tsv")
    sizes = read_tsv(tmp_path / "sizes.tsv")
    assert set(sizes["dataset"]) == {KEY}
    # per kind of split, the sizes count the features table's mappings
    for kind, column in (("name", "name_split"), ("attr", "attr_split")):
        part = sizes[sizes["kind"] == kind].set_index("split")["num_alignments"]
        counts = features[column].value_counts()
        for split, count in part.items():
            assert count == counts.get(split, 0), (kind, split)
        assert part.sum() == len(features)
    back = read_tsv(tmp_path / "f.tsv")
    assert list(zip(back["id1"], back["id2"])) == sorted(zip(features["id1"], features["id2"]))


def test_collate_tables_and_bias_checks(tmp_path):
    a = pd.DataFrame({"dataset": ["b", "b"], "kind": ["name", "attr"], "num_alignments": [3, 4]})
    c = pd.DataFrame({"dataset": ["a"], "kind": ["name"], "num_alignments": [5]})
    write_tsv(a, tmp_path / "b.tsv")
    write_tsv(c, tmp_path / "a.tsv")
    table = collate_tables_to_file([tmp_path / "b.tsv", tmp_path / "a.tsv"], tmp_path / "all.tsv", ["dataset", "kind"])
    assert len(table) == 3
    back = read_tsv(tmp_path / "all.tsv")
    assert list(zip(back["dataset"], back["kind"])) == [("a", "name"), ("b", "attr"), ("b", "name")]

    paths = []
    for dataset, seed, rows in (("d2", 1, 2), ("d1", 0, 1), ("d1", 3, 0)):
        path = tmp_path / dataset / "seeds" / str(seed) / "bias_check.tsv"
        path.parent.mkdir(parents=True)
        frame = pd.DataFrame({"bias": ["none"] * rows, "train_ratio": [0.2] * rows, "role": ["train", "test"][:rows],
                              "mean_s_name": [0.5] * rows})
        write_tsv(frame if rows else pd.DataFrame(columns=["bias"]), path)  # an empty check: every setting skipped
        paths.append(path)
    bias = collate_bias_to_file(paths, tmp_path / "bias.tsv")
    assert len(bias) == 3 and set(zip(bias["dataset"], bias["seed"])) == {("d2", 1), ("d1", 0)}
    assert list(read_tsv(tmp_path / "bias.tsv").columns[:2]) == ["dataset", "seed"]
    empty = collate_bias_to_file(paths[2:], tmp_path / "none.tsv")
    assert empty.empty and list(empty.columns) == ["dataset", "seed", "bias"]


def test_collated_runs_and_table_choice(tmp_path):
    features_to_files(KEY, SPEC, SETTINGS, None, tmp_path / "f.tsv", tmp_path / "sizes.tsv")
    seed_dir = tmp_path / KEY / "seeds" / "0"
    seed_sets_to_files(tmp_path / "f.tsv", ["none"], [0.2], 0.5, 0, seed_dir / "seeds.tsv", seed_dir / "status.tsv",
                       seed_dir / "bias.tsv")
    run = tmp_path / KEY / "runs" / "name_similarity" / "none" / "0.2" / "0"
    [status] = evaluate_model_to_files(
        KEY, SPEC, SETTINGS, None, SeedFiles(tmp_path / "f.tsv", seed_dir / "seeds.tsv", seed_dir / "status.tsv"),
        MethodRun("name_similarity", {}, 0),
        RunFiles([run / "ranks.parquet"], [run / "split_metrics.tsv"], [run / "status.json"]),
    )
    long = collate_to_files([run / "split_metrics.tsv"], [run / "status.json"], tmp_path / "m.tsv", tmp_path / "r.tsv")
    runs = read_tsv(tmp_path / "r.tsv")
    assert len(runs) == 1
    row = runs.iloc[0]
    assert (row["dataset"], row["model"], row["bias"], row["train_ratio"], row["seed"]) == (
        KEY, "name_similarity", "none", 0.2, 0)
    for key in ("status", "num_train", "num_valid", "num_test", "num_epochs"):
        assert row[key] == status[key], key
    assert len(long) == len(read_tsv(run / "split_metrics.tsv"))
    with pytest.raises(ValueError, match="which must be table2 or table3, got 'table4'"):
        tables_to_files(tmp_path / "m.tsv", tmp_path / "r.tsv", tmp_path / "t.tsv", "table4",
                        {"bias": "none", "train_ratio": 0.2}, {"bias": "none", "train_ratio": 0.2},
                        ["name_similarity"])
