"""kgeval.lp.id_maps: a torch.save'd model numbered otherwise than the dataset is refused without an id map, and with
its map (a kind/id/label TSV, or a TriplesFactory folder) ranks exactly as the same model numbered as the dataset."""

from __future__ import annotations

import copy
import gzip

import numpy as np
import pandas as pd
import pytest
import torch

from kgeval.config import ConfigError, validate_config
from kgeval.lp.checkpoint import CheckpointError, checked_checkpoint, import_checkpoint
from kgeval.lp.datasets import load_dataset
from kgeval.lp.id_maps import IdMapError, label_permutation, read_id_map, renumber_model
from kgeval.lp.ranks import rank_triples
from kgeval.lp.source_checks import check_source_files

NATIONS = {"source": "pykeen", "name": "Nations"}


@pytest.fixture(scope="module")
def nations():
    return load_dataset("nations", NATIONS)


def _labels(mapping: dict[str, int]) -> list[str]:
    return [label for label, _ in sorted(mapping.items(), key=lambda item: item[1])]


def _model(nations, inverse: bool) -> torch.nn.Module:
    from pykeen.models import TransE
    from pykeen.triples import TriplesFactory

    factory = TriplesFactory(nations.training.mapped_triples, nations.training.entity_to_id,
                             nations.training.relation_to_id, create_inverse_triples=inverse)
    return TransE(triples_factory=factory, embedding_dim=8, random_seed=0).eval()


def _permuted(model: torch.nn.Module, nations, seed: int = 1) -> tuple[torch.nn.Module, dict[str, list[str]]]:
    """The same model with its ids shuffled: model id q[i] means the dataset's id i; and its labels by id."""
    rng = np.random.default_rng(seed)
    permuted = copy.deepcopy(model)
    labels = {}
    for kind, reps, mapping in (("entity", permuted.entity_representations, nations.training.entity_to_id),
                                ("relation", permuted.relation_representations, nations.training.relation_to_id)):
        q = rng.permutation(len(mapping))
        for rep in reps:
            weight = rep._embeddings.weight
            rows = torch.as_tensor(q)
            if rep.max_id == 2 * len(mapping):  # inverse relations: 2r and 2r + 1 move together
                rows = torch.stack([2 * rows, 2 * rows + 1], dim=1).reshape(-1)
            with torch.no_grad():
                new = weight.clone()
                new[rows] = weight
                weight.copy_(new)
        by_model_id = [""] * len(mapping)
        for dataset_id, label in enumerate(_labels(mapping)):
            by_model_id[q[dataset_id]] = label
        labels[kind] = by_model_id
    return permuted, labels


def _ranks(nations, model, tmp_path):
    triples = nations.factory("test").mapped_triples
    return rank_triples(nations, model, triples, str(tmp_path / "r.parquet"),
                        filter_triples=nations.all_mapped_triples())[0]


def _write_table(labels, path):
    rows = [(kind, i, label) for kind in ("entity", "relation") for i, label in enumerate(labels[kind])]
    pd.DataFrame(rows, columns=["kind", "id", "label"]).to_csv(path, sep="\t", index=False)


def _write_folder(labels, folder):
    folder.mkdir()
    for kind in ("entity", "relation"):
        with gzip.open(folder / f"{kind}_to_id.tsv.gz", "wt") as handle:
            pd.DataFrame({"id": range(len(labels[kind])), "label": labels[kind]}).to_csv(handle, sep="\t",
                                                                                         index=False)


@pytest.mark.parametrize("inverse", [False, True])
def test_permuted_model_is_refused_without_ids_and_ranks_right_with_them(tmp_path, nations, inverse):
    model = _model(nations, inverse)
    permuted, labels = _permuted(model, nations)
    torch.save(permuted, tmp_path / "permuted.pt")
    with pytest.raises(CheckpointError, match=r"permuted\.pt: the model has no saved labels .*Add to its config entry "
                                              r"ids: .*or ids: dataset"):
        checked_checkpoint(tmp_path / "permuted.pt", nations)
    _write_table(labels, tmp_path / "ids.tsv")
    _write_folder(labels, tmp_path / "factory")
    truth = _ranks(nations, model, tmp_path)
    for ids in (tmp_path / "ids.tsv", tmp_path / "factory"):
        loaded, check = checked_checkpoint(tmp_path / "permuted.pt", nations, ids=str(ids))
        assert f"through the id map {ids}" in check
        pd.testing.assert_frame_equal(_ranks(nations, loaded, tmp_path), truth)
    wrong, check = checked_checkpoint(tmp_path / "permuted.pt", nations, ids="dataset")
    assert "ids: dataset" in check
    assert not _ranks(nations, wrong, tmp_path)["rank_realistic"].equals(truth["rank_realistic"])


def test_the_refusal_comes_before_any_job_naming_the_key(tmp_path, nations, capsys):
    permuted, labels = _permuted(_model(nations, False), nations)
    torch.save(permuted, tmp_path / "permuted.pt")
    entry = {"source": "checkpoint", "path": str(tmp_path / "permuted.pt"), "dataset": "nations"}
    config = validate_config({"datasets": {"nations": dict(NATIONS)}, "models": {"mine": entry}})
    with pytest.raises(ConfigError, match=r"^config key models\.mine\.path: .*permuted\.pt: the model has no saved "
                                          r"labels"):
        check_source_files(config)
    config["models"]["mine"]["ids"] = str(tmp_path / "missing.tsv")
    with pytest.raises(ConfigError, match=r"models\.mine\.ids: .*missing\.tsv does not exist"):
        check_source_files(config)
    _write_table(labels, tmp_path / "ids.tsv")
    config["models"]["mine"]["ids"] = str(tmp_path / "ids.tsv")
    check_source_files(config)
    assert "kgeval: models.mine" in capsys.readouterr().err
    import_checkpoint(config["models"]["mine"], config["datasets"]["nations"], None, str(tmp_path / "model.pt"),
                      str(tmp_path / "source.json"))
    assert "through the id map" in (tmp_path / "source.json").read_text()


def test_ids_belong_to_checkpoints_only():
    entry = {"source": "ranks", "path": "r.tsv", "dataset": "nations", "ids": "dataset"}
    with pytest.raises(ConfigError, match=r"models\.theirs\.ids: only a model with source checkpoint"):
        validate_config({"datasets": {"nations": dict(NATIONS)}, "models": {"theirs": entry}})


def test_maps_that_do_not_fit_fail_naming_the_label(tmp_path):
    with pytest.raises(IdMapError, match=r"the dataset's entity 'c' has no id in the model's map"):
        label_permutation(["a", "b", "x"], ["a", "b", "c"], "entity", "m.pt")
    assert label_permutation(["a", "b"], ["a", "b"], "entity", "m.pt") is None
    assert label_permutation(["b", "a"], ["a", "b"], "entity", "m.pt").tolist() == [1, 0]
    (tmp_path / "bad.tsv").write_text("kind\tid\tlabel\nentity\t0\ta\nentity\t2\tb\nrelation\t0\tr\n")
    with pytest.raises(IdMapError, match=r"bad\.tsv \(entity rows\): the ids are not 0 \.\. 1"):
        read_id_map(tmp_path / "bad.tsv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IdMapError, match=r"holds no entity_to_id\.tsv\.gz"):
        read_id_map(tmp_path / "empty")


def test_only_plain_embeddings_are_renumbered():
    from types import SimpleNamespace

    model = SimpleNamespace(entity_representations=torch.nn.ModuleList([torch.nn.Linear(2, 2)]))
    with pytest.raises(IdMapError, match=r"representation is a Linear, which kgeval renumbers only as a plain Embedding"):
        renumber_model(model, {"entity": np.array([1, 0])}, "m.pt")
