"""Atomic writers: an interrupted or failed job never leaves a half-written output behind.

Every file is written to a temporary sibling first and moved into place with :func:`os.replace`, which is atomic
on POSIX file systems. A reader (or a later Snakemake run) therefore sees either the complete old file, the complete
new file, or no file at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "atomic_path",
    "write_tsv",
    "write_parquet",
    "write_json",
    "read_tsv",
]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` only if the block succeeds.

    :param path: the final destination
    :param suffix: suffix of the temporary file (defaults to the destination's, so writers that infer the format
        from the extension keep working)
    :yields: the temporary path to write to
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=suffix if suffix is not None else "".join(path.suffixes), dir=path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates the file with mode 0600; give the output the permissions a plain open() would have
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_tsv(df: pd.DataFrame, path: str | os.PathLike, sort_by: Sequence[str] | None = None) -> None:
    """Write a table as TSV with a header and rows sorted (by ``sort_by``, else by all columns), atomically."""
    if sort_by is None:
        sort_by = list(df.columns)
    if len(sort_by):
        df = df.sort_values(list(sort_by), kind="stable").reset_index(drop=True)
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, float_format="%.10g")


def write_parquet(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a table as Parquet, atomically."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def write_json(obj: Any, path: str | os.PathLike) -> None:
    """Write JSON (sorted keys, indented), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def read_tsv(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TSV written by :func:`write_tsv`."""
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])
