"""kgeval.lp.libkge_trace: a LibKGE per-example trace written from a ranks file reads back (through the ranks file's
checks) to the same ranks tables and metrics; a trace without the test-filtered rank fails with the fix."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kgeval.cli import main
from kgeval.lp.datasets import load_dataset
from kgeval.lp.libkge_trace import read_trace
from kgeval.lp.ranks import rank_triples
from kgeval.lp.ranks_file import RanksFileError, read_ranks_file, write_ranks_file
from kgeval.metrics import compute_metrics


@pytest.fixture(scope="module")
def nations():
    return load_dataset("nations", {"source": "pykeen", "name": "Nations"})


def _ranks(nations, folder):
    from pykeen.models import TransE

    model = TransE(triples_factory=nations.training, embedding_dim=8, random_seed=0).eval()
    frames = []
    for split in ("valid", "test"):
        table = rank_triples(nations, model, nations.factory(split).mapped_triples, str(folder / f"{split}.parquet"),
                             filter_triples=nations.all_mapped_triples())[0]
        frames.append(table.assign(split=split))
    return pd.concat(frames, ignore_index=True)


def _write_libkge(ranks, nations, folder, with_test=True):
    """LibKGE's id files (its own, shuffled, numbering) and a trace with other events and an earlier epoch."""
    rng = np.random.default_rng(0)
    index = {}
    for kind, mapping in (("entity", nations.training.entity_to_id), ("relation", nations.training.relation_to_id)):
        labels = sorted(mapping)
        order = rng.permutation(len(labels))
        index[kind] = {labels[i]: int(j) for i, j in enumerate(order)}
        rows = sorted((j, label) for label, j in index[kind].items())
        (folder / f"{kind}_ids.del").write_text("".join(f"{j}\t{label}\n" for j, label in rows))
    lines = [json.dumps({"event": "job_created", "type": "entity_ranking"})]
    for epoch in (1, 2):
        for row in ranks.itertuples():
            entry = {"event": "example_rank", "task": "sp" if row.side == "tail" else "po", "split": row.split,
                     "s": index["entity"][row.head], "p": index["relation"][row.relation],
                     "o": index["entity"][row.tail], "rank": int(row.rank_optimistic) + 3,
                     "rank_filtered": int(row.rank_optimistic) + 1, "epoch": epoch, "scope": "example"}
            if with_test:
                entry["rank_filtered_with_test"] = int(row.rank_optimistic) + (epoch == 1)
            lines.append(json.dumps(entry))
    (folder / "trace.yaml").write_text("\n".join(lines) + "\n")


def test_trace_gives_the_metrics_of_its_ranks_file(tmp_path, nations, capsys):
    ranks = _ranks(nations, tmp_path)
    _write_libkge(ranks, nations, tmp_path)
    write_ranks_file(ranks[["head", "relation", "tail", "side", "split"]].assign(rank=ranks["rank_optimistic"]),
                     tmp_path / "direct.tsv")
    assert main(["libkge-trace", str(tmp_path / "trace.yaml"), "--ids", str(tmp_path), "--out",
                 str(tmp_path / "from_trace.tsv")]) == 0
    assert "from_trace.tsv: 800 ranks" in capsys.readouterr().out
    direct = read_ranks_file(tmp_path / "direct.tsv", nations, ["valid", "test"], seed=0)
    traced = read_ranks_file(tmp_path / "from_trace.tsv", nations, ["valid", "test"], seed=0)
    for split in ("valid", "test"):
        pd.testing.assert_frame_equal(traced[split], direct[split])
        pd.testing.assert_frame_equal(compute_metrics(traced[split]), compute_metrics(direct[split]))


def test_a_trace_without_test_filtering_fails_with_the_fix(tmp_path, nations):
    ranks = _ranks(nations, tmp_path)
    _write_libkge(ranks, nations, tmp_path, with_test=False)
    with pytest.raises(RanksFileError, match=r"trace\.yaml, line 2: the entry has no rank_filtered_with_test .*"
                                             r"entity_ranking\.filter_with_test: True"):
        read_trace(tmp_path / "trace.yaml")
    (tmp_path / "empty.yaml").write_text("{event: job_created}\n")
    with pytest.raises(RanksFileError, match=r"no example_rank entries; run LibKGE's evaluation with "
                                             r"eval\.trace_level: example"):
        read_trace(tmp_path / "empty.yaml")
