"""kgeval.lp.ranks_file: a ranks file exported from kgeval's own ranks tables reads back to the same tables and the
same metrics; every bad input fails naming the file, the line and the fix."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from pykeen.models import DistMult

from conftest import REPO
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranking import rank_lp
from kgeval.lp.ranks import ranks_frame
from kgeval.lp.ranks_file import COLUMNS, RanksFileError, import_ranks, read_ranks_file, read_table, write_ranks_file
from kgeval.metrics import compute_metrics

SPEC = {"source": "files", **{s: str(REPO / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}}
SPLITS = ["valid", "test"]
MINIMAL = ["head", "relation", "tail", "side", "rank_optimistic", "rank_pessimistic"]


@pytest.fixture(scope="module")
def tiny():
    return load_dataset("tiny", SPEC)


@pytest.fixture(scope="module")
def tables(tiny) -> dict[str, pd.DataFrame]:
    """kgeval's own ranks tables of a small model, one per split."""
    model = DistMult(triples_factory=tiny.training, embedding_dim=8, random_seed=3).eval()
    out = {}
    for split in SPLITS:
        triples = tiny.factory(split).mapped_triples
        with torch.no_grad():
            results = rank_lp(model, triples, filter_triples=tiny.all_mapped_triples())
        out[split] = ranks_frame(tiny, triples, results)
    return out


@pytest.fixture(scope="module")
def exported(tables) -> pd.DataFrame:
    """Both splits in one table with a split column, rows shuffled (a file need not follow kgeval's order)."""
    frame = pd.concat([t.assign(split=s) for s, t in tables.items()], ignore_index=True)
    return frame.sample(frac=1.0, random_state=0).reset_index(drop=True)


@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_exported_ranks_read_back_to_the_same_tables_and_metrics(tmp_path, tiny, tables, exported, suffix):
    path = tmp_path / f"ranks{suffix}"
    write_ranks_file(exported, path)
    got = read_ranks_file(path, tiny, SPLITS, seed=0)
    for split in SPLITS:
        pd.testing.assert_frame_equal(got[split], tables[split])
        pd.testing.assert_frame_equal(compute_metrics(got[split]), compute_metrics(tables[split]))


def test_minimal_file_gets_the_same_ranks_and_candidates(tmp_path, tiny, tables, exported):
    """Only the keys and two ranks, no split column: kgeval counts the candidates and takes the mean as realistic."""
    path = tmp_path / "minimal.tsv"
    write_ranks_file(exported[MINIMAL], path)
    got = read_ranks_file(path, tiny, SPLITS, seed=0)
    for split in SPLITS:
        columns = [*MINIMAL, "rank_realistic", "num_candidates"]
        pd.testing.assert_frame_equal(got[split][columns], tables[split][columns])
        metrics = compute_metrics(got[split])
        want = compute_metrics(tables[split])
        same = metrics["rank_type"] != "nondeterministic"
        pd.testing.assert_frame_equal(metrics[same].reset_index(drop=True), want[same].reset_index(drop=True))
        assert (got[split]["score"] == -got[split]["rank_realistic"]).all()  # the stand-in that orders answers


def test_ties_give_a_realistic_mean_and_a_seeded_nondeterministic_draw(tmp_path, tiny, exported):
    frame = exported[MINIMAL].copy()
    frame["rank_optimistic"] = 1
    frame["rank_pessimistic"] = 3  # every tiny query has more than 3 candidates
    write_ranks_file(frame, tmp_path / "ties.tsv")
    first = read_ranks_file(tmp_path / "ties.tsv", tiny, SPLITS, seed=5)["test"]
    assert (first["rank_realistic"] == 2.0).all()
    assert first["rank_nondeterministic"].between(1, 3).all() and first["rank_nondeterministic"].nunique() == 3
    again = read_ranks_file(tmp_path / "ties.tsv", tiny, SPLITS, seed=5)["test"]
    other = read_ranks_file(tmp_path / "ties.tsv", tiny, SPLITS, seed=6)["test"]
    assert again.equals(first) and not other["rank_nondeterministic"].equals(first["rank_nondeterministic"])


def test_one_rank_column_is_every_rank_type(tmp_path, tiny, tables, exported):
    frame = exported[["head", "relation", "tail", "side", "rank_optimistic"]].rename(columns={"rank_optimistic": "rank"})
    write_ranks_file(frame, tmp_path / "one.tsv")
    got = read_ranks_file(tmp_path / "one.tsv", tiny, ["test"], seed=0)["test"]
    for kind in ("optimistic", "realistic", "pessimistic", "nondeterministic"):
        assert (got[f"rank_{kind}"].to_numpy() == tables["test"]["rank_optimistic"].to_numpy()).all()


def test_a_split_column_is_not_needed_when_a_triple_is_in_both_splits(tmp_path, tiny, exported):
    """Without a split column a row counts for each split holding its triple: the tiny test split only is asked."""
    write_ranks_file(exported[exported["split"] == "test"][MINIMAL], tmp_path / "test_only.tsv")
    got = read_ranks_file(tmp_path / "test_only.tsv", tiny, ["test"], seed=0)
    assert set(got) == {"test"} and len(got["test"]) == 2 * tiny.testing.num_triples


def _bad(frame: pd.DataFrame, row: int, column: str, value) -> pd.DataFrame:
    frame = frame.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return frame


#: (name, how to spoil the minimal file, the message it must fail with); line N is row N - 2 of the frame
BAD_FILES = [
    ("unknown entity", lambda f: _bad(f, 3, "head", "atlantis"),
     r"bad\.tsv, line 5: head 'atlantis' is not an entity of dataset 'tiny' .*use the labels of the dataset"),
    ("unknown relation", lambda f: _bad(f, 0, "relation", "likes"),
     r"bad\.tsv, line 2: relation 'likes' is not a relation of dataset 'tiny'"),
    ("rank above candidates", lambda f: _bad(f, 4, "rank_pessimistic", 999),
     r"bad\.tsv, line 6: rank 999 is above its \d+ candidates .*are the ranks raw \(unfiltered\)\?"),
    ("missing side", lambda f: f.drop(index=7),
     r"bad\.tsv, line \d+: \(.*\) has a (head|tail) row but no (head|tail) row .*every triple needs both sides"),
    ("duplicate row", lambda f: pd.concat([f, f.iloc[[2]]], ignore_index=True),
     r"bad\.tsv, line \d+: \(.*\) side (head|tail) appears again \(first at line 4\); keep one row per triple and side"),
    ("missing triple", lambda f: f[~((f["head"] == f["head"][0]) & (f["relation"] == f["relation"][0])
                                     & (f["tail"] == f["tail"][0]))],
     r"bad\.tsv: the (valid|test) triple \(.*\) has no rows .*on both sides"),
    ("missing split", lambda f: f[f["split"] == "test"],
     r"bad\.tsv: no ranks for split valid \(20 triples\); add its rows, or rank fewer splits \(ranking.splits: \['test'\]\)"),
    ("not an evaluation triple", lambda f: _bad(f, 1, "split", {"valid": "test", "test": "valid"}[f["split"][1]]),
     r"bad\.tsv, line 3: \(.*\) is not a (valid|test) triple of dataset 'tiny'"),
    ("bad side", lambda f: _bad(f, 0, "side", "left"), r"bad\.tsv, line 2: side 'left'; use one of \['head', 'tail'\]"),
    ("not a number", lambda f: _bad(f, 2, "rank_optimistic", "x"), r"bad\.tsv, line 4: rank_optimistic 'x' is not a number"),
    ("rank below 1", lambda f: _bad(f, 2, "rank_optimistic", 0), r"line 4: rank_optimistic 0 is not a whole number of at least 1"),
    ("tie-averaged rank", lambda f: _bad(f, 2, "rank_optimistic", 2.5),
     r"line 4: rank_optimistic 2\.5 is not a whole number of at least 1; tie-averaged ranks .*export rank_optimistic "
     r"and rank_pessimistic"),
    ("swapped ranks", lambda f: f.assign(rank_optimistic=f["rank_pessimistic"] + 1),
     r"line 2: rank_optimistic is above rank_pessimistic"),
    ("other filtering", lambda f: f.assign(num_candidates=f["num_candidates"] + 1),
     r"line \d+: num_candidates \d+ differs from the dataset's \d+ .*filtered otherwise"),
    ("no rank", lambda f: f.drop(columns=["rank_optimistic", "rank_pessimistic"]),
     r"bad\.tsv: give either one rank column `rank`, or `rank_optimistic` and `rank_pessimistic`"),
]


@pytest.mark.parametrize(("name", "spoil", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_fails_naming_file_line_and_fix(tmp_path, tiny, exported, name, spoil, message):
    frame = exported[[*MINIMAL, "split", "num_candidates"]] if name == "other filtering" else exported[[*MINIMAL, "split"]]
    write_ranks_file(spoil(frame.reset_index(drop=True)), tmp_path / "bad.tsv")
    with pytest.raises(RanksFileError, match=message):
        read_ranks_file(tmp_path / "bad.tsv", tiny, SPLITS, seed=0)


def test_file_level_problems(tmp_path, tiny, exported):
    (tmp_path / "ranks.csv").write_text("head,relation,tail\n")
    with pytest.raises(RanksFileError, match=r"ranks\.csv: a ranks file is a \.tsv .* or a \.parquet file"):
        read_table(tmp_path / "ranks.csv")
    (tmp_path / "x.tsv").write_text("head\trelation\ttail\tside\trank_pesimistic\n")
    with pytest.raises(RanksFileError, match=r"x\.tsv: unknown column\(s\) \['rank_pesimistic'\]; a ranks file has"):
        read_table(tmp_path / "x.tsv")
    with pytest.raises(RanksFileError, match=r"no column\(s\) \['query'\]"):
        write_ranks_file(exported.assign(query=1), tmp_path / "y.tsv")
    assert set(COLUMNS) >= set(exported.columns)


def test_import_writes_the_tables_and_what_was_filled_in(tmp_path, tables, exported):
    path = tmp_path / "theirs.tsv"
    write_ranks_file(exported[[*MINIMAL, "split"]], path)
    outs = [str(tmp_path / "out" / f"{s}.parquet") for s in SPLITS]
    import_ranks({"path": str(path), "dataset": "tiny"}, SPEC, None, SPLITS, 0, outs, str(tmp_path / "out" / "source.json"))
    for split, out in zip(SPLITS, outs):
        assert pd.read_parquet(out)[MINIMAL].equals(tables[split][MINIMAL])
    info = json.loads((tmp_path / "out" / "source.json").read_text())
    assert info["filled_in"] == ["rank_nondeterministic", "num_candidates", "score"]
    assert info["rows"] == {s: len(tables[s]) for s in SPLITS}
