"""Collation of S5's per-model tables: keys from the folder names, class names, one sorted table per kind."""

from __future__ import annotations

import pandas as pd
import pytest

from kgeval.studies.s5.collation import collate_s5


def _write(path, frame):
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, sep="\t", index=False)
    return str(path)


def test_collate_stacks_the_runs_with_their_keys(tmp_path):
    runs = [("wn18rr", "transe", 1), ("nations", "boxe", 0), ("nations", "transe", 0)]
    paths = {"assessment": [], "summary": [], "calibrators": []}
    for i, (dataset, model, seed) in enumerate(runs):
        run = tmp_path / "s5" / dataset / model / str(seed)
        paths["summary"].append(_write(run / "summary.tsv", pd.DataFrame({"metric": ["t_lp", "mr"], "value": [i, 10 + i]})))
        paths["assessment"].append(
            _write(run / "assessment.tsv", pd.DataFrame({"calibrator": ["isotonic"], "strategy": ["lcwa"],
                                                         "metric": ["r2_w"], "value": [0.5 + i]}))
        )
        paths["calibrators"].append(_write(run / "calibrators.tsv", pd.DataFrame({"calibrator": ["isotonic"], "a": [i]})))
    out = {name: tmp_path / f"{name}.tsv" for name in paths}
    collate_s5(
        assessment_paths=paths["assessment"],
        summary_paths=paths["summary"],
        calibrator_paths=paths["calibrators"],
        model_names={"transe": "TransE"},  # boxe is not named: its key stays
        assessment_out=out["assessment"],
        summary_out=out["summary"],
        calibrators_out=out["calibrators"],
    )
    summary = pd.read_csv(out["summary"], sep="\t")
    assert list(summary.columns[:4]) == ["dataset", "model", "model_class", "seed"]
    # sorted by dataset, model, seed, then metric (by hand: nations/boxe, nations/transe, wn18rr/transe)
    assert list(zip(summary["dataset"], summary["model"], summary["metric"])) == [
        ("nations", "boxe", "mr"), ("nations", "boxe", "t_lp"),
        ("nations", "transe", "mr"), ("nations", "transe", "t_lp"),
        ("wn18rr", "transe", "mr"), ("wn18rr", "transe", "t_lp"),
    ]
    assert list(summary["model_class"]) == ["boxe", "boxe", "TransE", "TransE", "TransE", "TransE"]
    assert list(summary["seed"]) == [0, 0, 0, 0, 1, 1]
    assert list(summary["value"]) == [11, 1, 12, 2, 10, 0]
    assessment = pd.read_csv(out["assessment"], sep="\t")
    assert list(assessment["value"]) == [1.5, 2.5, 0.5]
    assert list(pd.read_csv(out["calibrators"], sep="\t")["a"]) == [1, 2, 0]


def test_collate_without_runs_says_why(tmp_path):
    with pytest.raises(ValueError, match="studies.s5.models"):
        collate_s5([], [], [], {}, tmp_path / "a.tsv", tmp_path / "s.tsv", tmp_path / "c.tsv")
