"""Fig. 1 of S3: the table behind it (roles of one seed setting) and the files it writes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s3.figures import mappings_table, plot_mappings_to_files


def _inputs(tmp_path, with_attributes=True):
    features = pd.DataFrame(
        {
            "id1": [0, 1, 2, 3],
            "id2": [5, 6, 7, 8],
            "s_name": [1.0, 0.5, np.nan, 1.0],
            "n_attr": [20.0, 3.0, 1.0, 200.0] if with_attributes else [np.nan] * 4,
            "name_split": ["same", "close", "different", "same"],
            "attr_split": ["large", "small", "small", "large"] if with_attributes else [None] * 4,
        }
    )
    seeds = pd.DataFrame(
        {
            "bias": ["both", "both", "none"],
            "train_ratio": [0.02, 0.02, 0.02],
            "role": ["train", "valid", "train"],
            "id1": [3, 0, 1],
            "id2": [8, 5, 6],
        }
    )
    write_tsv(features, tmp_path / "features.tsv", sort_by=["id1"])
    write_tsv(seeds, tmp_path / "seeds.tsv", sort_by=[])
    return features, seeds


def test_mappings_table_marks_the_seeds_of_one_setting(tmp_path):
    features, seeds = _inputs(tmp_path)
    table = mappings_table(features, seeds, "both", 0.02)
    assert table["role"].tolist() == ["valid", "test", "test", "train"]
    assert mappings_table(features, seeds, "none", 0.02)["role"].tolist() == ["test", "train", "test", "test"]


def test_plot_mappings_writes_figure_and_table(tmp_path):
    for with_attributes in (True, False):
        _inputs(tmp_path, with_attributes)
        out = [tmp_path / f"m.{ext}" for ext in ("pdf", "png", "tsv")]
        plot_mappings_to_files(tmp_path / "features.tsv", tmp_path / "seeds.tsv", "tiny", "both", 0.02, *out)
        assert out[0].stat().st_size > 0 and out[1].stat().st_size > 0
        table = read_tsv(out[2])
        assert len(table) == 4 and (table["role"] != "test").sum() == 2
