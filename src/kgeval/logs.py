"""Job logging: send Python logging (and warnings) of one pipeline step to its Snakemake log file."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["log_to"]


@contextlib.contextmanager
def log_to(path: str | os.PathLike | None, threads: int | None = None) -> Iterator[logging.Logger]:
    """Within the block, log INFO and above to ``path`` (and stderr); set torch's thread count to ``threads``.

    An exception raised in the block is logged with its traceback before it propagates, so a failed job's log says why.

    :param path: the log file (``None`` logs to stderr only)
    :param threads: number of intra-op threads for torch (the rule's ``threads``)
    """
    root = logging.getLogger()
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(path, mode="w", encoding="utf-8"))
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in handlers:
        handler.setFormatter(fmt)
        root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    logging.getLogger("fontTools").setLevel(logging.WARNING)  # PDF font subsetting is chatty at INFO
    logging.captureWarnings(True)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    logger = logging.getLogger("kgeval")
    try:
        yield logger
    except BaseException:
        logger.exception("step failed")
        raise
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)
        logging.captureWarnings(False)
