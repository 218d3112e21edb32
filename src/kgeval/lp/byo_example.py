"""The inputs of ``config/byo.yaml``, built offline in seconds: two models trained elsewhere on PyKEEN's Nations.

- ``transe_checkpoint/``: a TransE trained by :func:`pykeen.pipeline.pipeline` and saved with
  ``PipelineResult.save_to_directory()`` (a ``source: checkpoint`` entry);
- ``distmult_ranks.tsv``: the filtered optimistic and pessimistic ranks of a DistMult trained the same way, one row
  per evaluation triple and side, as another tool would export them (a ``source: ranks`` entry; kgeval's engine
  ranks it here because PyKEEN exports no per-triple ranks).

``kgeval byo-example [--out FOLDER]`` writes them (default ``results/byo/inputs``, where ``config/byo.yaml`` reads
them); nothing is downloaded (Nations ships inside PyKEEN's wheel) and nothing is committed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["EXAMPLE_DIR", "CHECKPOINT_NAME", "RANKS_NAME", "train_elsewhere", "build_example", "add_subparser"]

#: where ``config/byo.yaml`` reads the example inputs
EXAMPLE_DIR = "results/byo/inputs"
#: the checkpoint folder and the ranks file under it
CHECKPOINT_NAME = "transe_checkpoint"
RANKS_NAME = "distmult_ranks.tsv"
#: the columns the example ranks file has (the rest kgeval fills in: docs/byo.md)
_EXPORTED = ["head", "relation", "tail", "side", "split", "rank_optimistic", "rank_pessimistic"]


def train_elsewhere(model: str, num_epochs: int = 2, seed: int = 0) -> Any:
    """Train a small model on Nations with PyKEEN's own ``pipeline()``, as a user would outside kgeval.

    :return: the :class:`pykeen.pipeline.PipelineResult`
    """
    from pykeen.pipeline import pipeline

    return pipeline(
        dataset="Nations",
        model=model,
        model_kwargs={"embedding_dim": 16},
        training_kwargs={"num_epochs": num_epochs, "batch_size": 256, "use_tqdm": False},
        evaluation_kwargs={"use_tqdm": False},
        random_seed=seed,
    )


def _exported_ranks(model: Any) -> pd.DataFrame:
    """The valid and test ranks of ``model`` on kgeval's Nations, in the columns of the example file."""
    import torch

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranking import rank_lp
    from kgeval.lp.ranks import ranks_frame

    data = load_dataset("nations", {"source": "pykeen", "name": "Nations"}, None)
    frames = []
    for split in ("valid", "test"):
        triples = data.factory(split).mapped_triples
        with torch.no_grad():
            results = rank_lp(model.cpu().eval(), triples, filter_triples=data.all_mapped_triples())
        frames.append(ranks_frame(data, triples, results).assign(split=split))
    return pd.concat(frames, ignore_index=True)[_EXPORTED]


def build_example(out: str | os.PathLike = EXAMPLE_DIR, num_epochs: int = 2) -> dict[str, Path]:
    """Write the checkpoint folder and the ranks file of ``config/byo.yaml`` under ``out``.

    :return: ``{"checkpoint": folder, "ranks": file}``
    """
    from kgeval.lp.ranks_file import write_ranks_file

    out = Path(out)
    paths = {"checkpoint": out / CHECKPOINT_NAME, "ranks": out / RANKS_NAME}
    train_elsewhere("TransE", num_epochs).save_to_directory(paths["checkpoint"])
    write_ranks_file(_exported_ranks(train_elsewhere("DistMult", num_epochs).model), paths["ranks"])
    return paths


def add_subparser(subparsers: Any) -> None:
    """``kgeval byo-example [--out FOLDER]``."""
    parser = subparsers.add_parser(
        "byo-example",
        help="write the example inputs of config/byo.yaml: a saved PyKEEN model and a ranks file (Nations, offline)",
    )
    parser.add_argument("--out", default=EXAMPLE_DIR, help=f"folder to write them to (default: {EXAMPLE_DIR})")
    parser.add_argument("--epochs", type=int, default=2, help="training epochs of the two small models (default: 2)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    paths = build_example(args.out, args.epochs)
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    return 0
