"""The authors' released S4 files (``zhouying20/kgc-sparsity`` at commit 513479a): where they are and how to read them.

Zhou et al. (2022) released, next to the labels (:mod:`kgeval.studies.s4.labels`), the results of their 13 systems
(``result/``; offline copy in ``{data_dir}/released/kgc-sparsity``):

- ``<test set>/evaluation.csv``: micro and macro Hits@1..10, MR, MRR and the trec_eval measures per system, for
  FB-Test-O (the FB15k-237 test set), FB-Test-S (its 1,023-triple sample), FB-Test-S-C (the sample completed by TREC
  pooling) and WN18RR;
- ``FB-Test-S-C/pooling_depth.csv``: the same per pooling depth 0..10 (depth 0 = FB-Test-S);
- ``<test set>/lp_per_rel_type.csv`` and ``lp_per_rel.csv``: micro metrics per question side and relation category,
  and per relation;
- ``FB-Test-S-C/lp_sample_rel_dist.csv``: micro metrics on FB-Test-S-C re-weighted by FB-Test-S's relation
  distribution (Eq. 1's ``psi``);
- ``<test set>/discriminative_power.csv``: paired t-test p-values per system pair and metric.

This module names those files and the label files read beside them, finds them under ``data_dir`` or downloads them,
and reads one released CSV with short system names. The tables built from them are in
:mod:`kgeval.studies.s4.released_results` and :mod:`kgeval.studies.s4.released_labels`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from kgeval.studies.s4.labels import RELEASE_FILES, RELEASE_URL, fetch_release

__all__ = [
    "RESULTS_URL",
    "RESULT_FILES",
    "LABEL_FILES",
    "TEST_SETS",
    "PathLike",
    "system_name",
    "fetch_results",
    "results_folder",
    "labels_folder",
    "read_release_csv",
]

#: raw-file root of the released results at the commit of the offline copy
RESULTS_URL = RELEASE_URL.rsplit("/", 1)[0] + "/result"

#: the released result files, relative to ``result/``
RESULT_FILES: tuple[str, ...] = (
    "FB-Test-O/evaluation.csv",
    "FB-Test-O/lp_per_rel.csv",
    "FB-Test-O/lp_per_rel_type.csv",
    "FB-Test-O/discriminative_power.csv",
    "FB-Test-S/evaluation.csv",
    "FB-Test-S/lp_per_rel.csv",
    "FB-Test-S/lp_per_rel_type.csv",
    "FB-Test-S-C/evaluation.csv",
    "FB-Test-S-C/lp_per_rel.csv",
    "FB-Test-S-C/lp_per_rel_type.csv",
    "FB-Test-S-C/lp_sample_rel_dist.csv",
    "FB-Test-S-C/pooling_depth.csv",
    "FB-Test-S-C/discriminative_power.csv",
    "WN18RR/evaluation.csv",
    "WN18RR/discriminative_power.csv",
)

#: the label files read here, relative to the release's ``data`` folder (the loader's plus names and pool records)
LABEL_FILES: tuple[str, ...] = (
    *RELEASE_FILES,
    "FB-Test-S-C/supplementary/human_labeled.txt",
    "FB-Test-S-C/supplementary/filtered.txt",
    "FB-Test-O/context/mid2name.txt",
)

#: the release's test sets: FB15k-237's test set, its sample, the completed sample, and WN18RR's test set
TEST_SETS: tuple[str, ...] = ("FB-Test-O", "FB-Test-S", "FB-Test-S-C", "WN18RR")
_SYSTEM_PREFIX = re.compile(r"^(fb15k-237|wn18rr)-")

PathLike = str | os.PathLike



def system_name(name: str) -> str:
    """The system's short name: the release's ``fb15k-237-hitter`` (or ``wn18rr-hitter``) becomes ``hitter``."""
    return _SYSTEM_PREFIX.sub("", str(name))


def fetch_results(cache_dir: PathLike | None = None, url: str = RESULTS_URL) -> Path:
    """Download the released result files (:data:`RESULT_FILES`) once (``pystow``) and return the local folder."""
    import pystow  # lazily: only users without a local copy need it

    module = pystow.Module(base=Path(cache_dir)) if cache_dir is not None else pystow.module("kgeval")
    root = None
    for relative in RESULT_FILES:
        parts = relative.split("/")
        target = module.ensure("kgc-sparsity-results", *parts[:-1], url=f"{url}/{relative}", name=parts[-1])
        root = target.parents[len(parts) - 1]
    assert root is not None
    return root


def _folder(data_dir: PathLike | None, folder: str | None) -> Path | None:
    if folder is None or (data_dir is None and not Path(folder).is_absolute()):
        return None
    return Path(folder) if Path(folder).is_absolute() else Path(data_dir) / folder


def results_folder(data_dir: PathLike | None, folder: str | None) -> Path:
    """The released results: ``{data_dir}/{folder}`` when both are set (or ``folder`` is absolute), else downloaded."""
    path = _folder(data_dir, folder)
    if path is None:
        return fetch_results()
    missing = [name for name in RESULT_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"S4 released results: {path / missing[0]} is missing ({len(missing)} files); point "
            f"studies.s4.released_results.folder at the release's result folder or set it to null to download "
            f"{RESULTS_URL}"
        )
    return path


def labels_folder(data_dir: PathLike | None, folder: str | None) -> Path:
    """The released label files: ``{data_dir}/{folder}``, else downloaded (:func:`fetch_release`)."""
    path = _folder(data_dir, folder)
    if path is None:
        return fetch_release(files=LABEL_FILES)
    missing = [name for name in LABEL_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"S4 release: {path / missing[0]} is missing; point studies.s4.released_results.labels at the release's "
            f"data folder or set it to null to download {RELEASE_URL}"
        )
    return path


def read_release_csv(folder: PathLike, relative: str) -> pd.DataFrame:
    """Read one released CSV; ``System``/``SystemA``/``SystemB`` become short names (:func:`system_name`)."""
    path = Path(folder) / relative
    table = pd.read_csv(path)
    for column in ("System", "SystemA", "SystemB"):
        if column in table.columns:
            table[column] = table[column].map(system_name)
    return table
