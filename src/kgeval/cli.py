"""The ``kgeval`` command line: one subcommand per task, each registered by the module that implements it.

To add a subcommand, write ``add_subparser(subparsers)`` in your module (it adds a parser and calls
``parser.set_defaults(func=run)`` with ``run(args) -> int``) and add the module's name to :data:`SUBCOMMAND_MODULES`.
Modules are imported only when the command line is parsed, so a slow import costs only the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kgeval import __version__

__all__ = ["SUBCOMMAND_MODULES", "build_parser", "main"]

#: modules that each provide ``add_subparser(subparsers)``
SUBCOMMAND_MODULES: tuple[str, ...] = ("kgeval.studies.s2.adjust", "kgeval.config")


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="kgeval", description="Rank-based evaluation studies for link prediction.")
    parser.add_argument("--version", action="version", version=f"kgeval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).add_subparser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kgeval``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
