"""The checks, before any job, of the models trained elsewhere (``source: checkpoint`` or ``ranks``).

Each one's files must exist; and, read in full as its import job will read them, they must fit its dataset (a
checkpoint's entity and relation counts and labels, :mod:`kgeval.lp.checkpoint`; a ranks file's rows, labels and
ranks, :mod:`kgeval.lp.ranks_file`). The workflow runs them while it parses (the reading only in its main process),
``kgeval check-config`` too; a problem is a :class:`kgeval.config.ConfigError` naming ``models.<key>.path`` (or
``.ids``), and the check a checkpoint's ids got (saved labels, an id map, or ``ids: dataset``) is one console line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kgeval.config import ConfigError
from kgeval.lp.byo_example import EXAMPLE_DIR
from kgeval.lp.sources import CHECKPOINT_MODEL_FILE, models_of_source, run_seed, source_files

__all__ = ["check_source_files"]


def check_source_files(config: Mapping[str, Any], deep: bool = True) -> None:
    """Check every model trained elsewhere before any job: its file exists and, with ``deep``, holds what its source
    promises for its dataset (a checkpoint's entity and relation counts and labels; a ranks file's rows, labels and
    ranks). Loads each such dataset and file once.

    :param config: the validated config
    :param deep: also read the files (the workflow does so in its main process only, not in every cluster job)
    :raises kgeval.config.ConfigError: naming ``models.<key>.path``, the file (and line) and the fix
    """
    datasets: dict[str, Any] = {}  # each dataset loaded once
    for key in models_of_source(config, ("checkpoint", "ranks")):
        spec = config["models"][key]
        where = f"config key models.{key}.path"
        missing = [p for p in source_files(config, key) if not Path(p).is_file()]
        if missing:
            if spec.get("ids") and Path(missing[0]) == Path(spec["ids"]):
                raise ConfigError(f"config key models.{key}.ids: {missing[0]} does not exist (relative paths are "
                                  f"relative to the working directory {os.getcwd()}); fix the path in the config")
            raise ConfigError(_missing_message(where, spec, missing[0]))
        if deep:
            try:
                check = _check_contents(config, key, datasets)
            except ValueError as error:
                raise ConfigError(f"{where}: {error}") from None
            if check:
                print(f"kgeval: models.{key} ({spec['path']}): {check}", file=sys.stderr)


def _missing_message(where: str, spec: Mapping[str, Any], missing: str) -> str:
    path = spec["path"]
    if spec["source"] == "checkpoint" and Path(path).is_dir():
        what = (
            f"folder {path} has no {CHECKPOINT_MODEL_FILE}; point path at the folder that "
            "PipelineResult.save_to_directory() wrote (or at a torch.save(model) file)"
        )
    else:
        what = f"{missing} does not exist (relative paths are relative to the working directory {os.getcwd()})"
    if Path(path).resolve().is_relative_to(Path(EXAMPLE_DIR).resolve()):
        return f"{where}: {what}; build the example inputs of config/byo.yaml first: kgeval byo-example"
    return f"{where}: {what}; fix the path in the config"


def _check_contents(config: Mapping[str, Any], key: str, datasets: dict[str, Any]) -> str:
    """Read a model trained elsewhere as its import job will, and raise what that job would raise.

    :return: for a checkpoint, the sentence naming the check its ids got (else ``""``)

    :param datasets: dataset key -> the loaded dataset (filled in here), shared by the models of one dataset
    """
    from kgeval.lp.datasets import load_dataset

    spec = config["models"][key]
    if spec["dataset"] not in datasets:
        dataset_spec = dict(config["datasets"][spec["dataset"]])
        datasets[spec["dataset"]] = load_dataset(spec["dataset"], dataset_spec, config["data_dir"])
    data = datasets[spec["dataset"]]
    if spec["source"] == "checkpoint":
        from kgeval.lp.checkpoint import checked_checkpoint

        return checked_checkpoint(spec["path"], data, spec["model"] or None, spec["ids"])[1]
    from kgeval.lp.ranks_file import read_ranks_file

    read_ranks_file(spec["path"], data, config["ranking"]["splits"], seed=run_seed(config, key))
    return ""
