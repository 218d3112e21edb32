"""Job logging: everything one pipeline step writes (logging, warnings, stdout, stderr) goes to its Snakemake log file.

The console of a run then shows Snakemake's progress and errors only; the details of each job are in
``<results_dir>/logs/<rule>/...``.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

__all__ = ["log_to"]


@contextlib.contextmanager
def _redirect_output(path: str | os.PathLike) -> Iterator[TextIO]:
    """Send ``sys.stdout``, ``sys.stderr`` and file descriptors 1 and 2 to ``path`` (truncated); restore them after.

    Descriptor-level too, so that what bypasses ``sys.stderr`` (C extensions, child processes, streams captured before
    the block) lands in the file. One open file (appending) serves all of them, so lines keep their order.

    :yields: the line-buffered text stream of the file
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {target: os.dup(target) for target in (1, 2)}
    stream = os.fdopen(fd, "w", buffering=1, encoding="utf-8", errors="backslashreplace")
    try:
        for target in saved:
            os.dup2(fd, target)
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            yield stream
    finally:
        with contextlib.suppress(ValueError, OSError):
            stream.flush()
        for target, copy in saved.items():
            os.dup2(copy, target)
            os.close(copy)
        stream.close()


class _TorchThreadsOnImport(importlib.abc.MetaPathFinder):
    """Import hook: call ``torch.set_num_threads(threads)`` as soon as ``torch`` has been imported, then step aside.

    A job whose work needs no torch (most of them read and write TSVs) then never pays torch's import, while one that
    imports torch somewhere inside its work gets the rule's thread count before torch runs anything, as if it had been
    set up front.
    """

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """Find ``torch`` with the other finders and wrap its loader; ``None`` (not mine) for every other module."""
        if fullname != "torch":
            return None
        self.remove()  # one shot; also keeps the lookup below from coming back here
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module
        threads = self.threads

        def exec_then_set_threads(module: ModuleType) -> None:
            exec_module(module)
            module.set_num_threads(threads)

        spec.loader.exec_module = exec_then_set_threads  # type: ignore[method-assign]
        return spec

    def remove(self) -> None:
        """Take the hook off ``sys.meta_path`` (if still there)."""
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


def _set_torch_threads(threads: int) -> Callable[[], None]:
    """Set torch's intra-op thread count: now if torch is loaded, else when it gets imported; the undo of the hook."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
        return lambda: None
    hook = _TorchThreadsOnImport(threads)
    sys.meta_path.insert(0, hook)
    return hook.remove


@contextlib.contextmanager
def log_to(path: str | os.PathLike | None, threads: int | None = None) -> Iterator[logging.Logger]:
    """Within the block, send logging (INFO and above), warnings and all output to ``path``; set torch's thread count.

    With a path, nothing of the block reaches the console: a Snakemake run shows its own progress, and each job's
    details stay in its log file. An exception raised in the block is logged with its traceback before it propagates
    (after the console is restored, so Snakemake reports it there as well).

    :param path: the log file (``None`` logs to stderr instead)
    :param threads: number of intra-op threads for torch (the rule's ``threads``); set when torch gets imported, so
        that a job which never needs torch does not pay for importing it
    """
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    redirect = _redirect_output(path) if path is not None else contextlib.nullcontext(sys.stderr)
    root = logging.getLogger()
    old_level = root.level
    with redirect as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        logging.getLogger("fontTools").setLevel(logging.WARNING)  # PDF font subsetting is chatty at INFO
        logging.captureWarnings(True)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        unhook = _set_torch_threads(int(threads)) if threads else (lambda: None)
        logger = logging.getLogger("kgeval")
        try:
            yield logger
        except BaseException:
            logger.exception("step failed")
            raise
        finally:
            unhook()
            root.removeHandler(handler)
            handler.close()
            root.setLevel(old_level)
            logging.captureWarnings(False)
