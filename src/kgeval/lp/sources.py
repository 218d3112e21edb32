"""Where each configured model comes from, and which (dataset, model, seed) runs the workflow therefore has.

A model entry's ``source`` (``workflow/schemas/config.schema.yaml``) is one of

- ``train``: trained here from its settings, on every dataset with every seed (the pipeline's own models);
- ``checkpoint``: a PyKEEN model trained elsewhere, read from the folder ``PipelineResult.save_to_directory()``
  wrote or from a ``torch.save(model)`` file (:mod:`kgeval.lp.checkpoint`), and ranked here like a trained one;
- ``ranks``: a file of its ranks (:mod:`kgeval.lp.ranks_file`), turned into the same ranks tables directly.

A model trained elsewhere has one run: on the dataset it names, under its ``seed`` (``null``: the first of
``seeds``). Everything downstream of the ranks tables (metrics, intervals, paired comparisons, S2's grid, S4's
analyses) treats every run alike; what needs the model's scores (a ``model.pt``: S1's permutations, S5, S4's pool
and its released label sets) takes the runs of :data:`SCORED` sources only. This module imports nothing heavy: the
workflow calls it while it parses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kgeval.config import full_datasets

__all__ = [
    "SOURCES",
    "SCORED",
    "CHECKPOINT_MODEL_FILE",
    "TRAINING_TRIPLES_DIR",
    "model_source",
    "models_of_source",
    "run_seed",
    "model_runs",
    "scored_models",
    "source_files",
]

#: the values of ``models.*.source``
SOURCES: tuple[str, ...] = ("train", "checkpoint", "ranks")
#: sources whose runs have a model that scores triples (``results/models/{dataset}/{model}/{seed}/model.pt``)
SCORED: tuple[str, ...] = ("train", "checkpoint")
#: the model file in a folder written by ``PipelineResult.save_to_directory()``
CHECKPOINT_MODEL_FILE = "trained_model.pkl"
#: the training triples factory in such a folder (``CoreTriplesFactory.to_path_binary``), when it was saved
TRAINING_TRIPLES_DIR = "training_triples"


def model_source(config: Mapping[str, Any], model: str) -> str:
    """The ``source`` of a configured model (``train``, ``checkpoint`` or ``ranks``)."""
    return config["models"][model]["source"]


def models_of_source(config: Mapping[str, Any], sources: Iterable[str]) -> list[str]:
    """The configured model keys whose source is one of ``sources``, in config order."""
    wanted = set(sources)
    return [key for key, spec in config["models"].items() if spec["source"] in wanted]


def run_seed(config: Mapping[str, Any], model: str) -> int:
    """The one seed of a model trained elsewhere: its ``seed``, or the first of ``seeds`` when that is null."""
    seed = config["models"][model]["seed"]
    return int(config["seeds"][0] if seed is None else seed)


def model_runs(
    config: Mapping[str, Any],
    datasets: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    seeds: Sequence[int | str] | None = None,
) -> list[tuple[str, str, str]]:
    """Every (dataset, model, seed) that has a ranks table, restricted to the given datasets, models and seeds.

    A trained model runs on every dataset with every seed; a model trained elsewhere on its own dataset under its
    own seed. The order is datasets, then models, then seeds, each in config order (as Snakemake's ``expand``).

    :param config: the validated config
    :param datasets: dataset keys to keep (``None``: every configured one ranked against every entity; a dataset
        evaluated with sampled candidates, ``ranking.candidates``, has no ranks tables and is named explicitly)
    :param models: model keys to keep (``None``: every configured one)
    :param seeds: seeds to keep (``None``: every configured one)
    :return: ``(dataset, model, seed)`` with the seed as a string, for file paths
    """
    datasets = full_datasets(config) if datasets is None else list(datasets)
    models = list(config["models"]) if models is None else list(models)
    seeds = [str(s) for s in (config["seeds"] if seeds is None else seeds)]
    runs = []
    for dataset in datasets:
        for model in models:
            spec = config["models"][model]
            if spec["source"] == "train":
                runs += [(dataset, model, seed) for seed in seeds]
            elif spec["dataset"] == dataset and str(run_seed(config, model)) in seeds:
                runs.append((dataset, model, str(run_seed(config, model))))
    return runs


def scored_models(config: Mapping[str, Any], models: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """Split model keys into those with a model that scores (trained, checkpoint) and those without (ranks).

    :return: ``(scored, ranks_only)``, each in the given order (``None``: every configured model)
    """
    models = list(config["models"]) if models is None else list(models)
    scored = [m for m in models if model_source(config, m) in SCORED]
    return scored, [m for m in models if m not in scored]


def source_files(config: Mapping[str, Any], model: str) -> list[str]:
    """The files a model trained elsewhere is read from (inputs of its import job; editing one reruns it).

    A checkpoint folder gives its ``trained_model.pkl`` and the files of ``training_triples/``; a checkpoint file or a
    ranks file gives itself; a checkpoint's ``ids`` map adds its file (or its folder's files); a trained model gives
    nothing. Paths that do not exist are returned as given (the
    check before any job names them: :func:`kgeval.lp.source_checks.check_source_files`).
    """
    spec = config["models"][model]
    if spec["source"] == "train":
        return []
    path = Path(spec["path"])
    ids = spec["ids"]
    maps = _folder_files(Path(ids)) if ids and ids != "dataset" and Path(ids).is_dir() else [ids]
    maps = [m for m in maps if m and m != "dataset"]
    if spec["source"] == "checkpoint" and path.is_dir():
        return [str(path / CHECKPOINT_MODEL_FILE), *_folder_files(path / TRAINING_TRIPLES_DIR), *maps]
    return [str(path), *maps]


def _folder_files(folder: Path) -> list[str]:
    """Every file under ``folder``, sorted (none when it is not a folder)."""
    return sorted(str(p) for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
