"""The ``kgeval`` command line: one subcommand per task, each registered by the module that implements it.

To add a subcommand, write ``add_subparser(subparsers)`` in your module (it adds a parser and calls
``parser.set_defaults(func=run)`` with ``run(args) -> int``) and add the module's name to :data:`SUBCOMMAND_MODULES`.
``check-config`` lives here: it checks the files the link-prediction and entity-alignment cores read besides the
configuration itself (in :mod:`kgeval.config`, which the cores import, it would make an import circle).
Modules are imported only when the command line is parsed, so a slow import costs only the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from kgeval import __version__

__all__ = ["SUBCOMMAND_MODULES", "build_parser", "main"]

#: modules that each provide ``add_subparser(subparsers)``
SUBCOMMAND_MODULES: tuple[str, ...] = ("kgeval.studies.s2.adjust", "kgeval.lp.byo_example", "kgeval.lp.libkge_trace")


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="kgeval", description="Rank-based evaluation studies for link prediction.")
    parser.add_argument("--version", action="version", version=f"kgeval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).add_subparser(subparsers)
    _add_check_config(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kgeval``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


def _add_check_config(subparsers: Any) -> None:
    """``kgeval check-config FILE``: the checks the workflow runs before any job, with YAML positions."""
    parser = subparsers.add_parser(
        "check-config",
        help="validate a config file (YAML syntax with line and column, schema, PyKEEN names and kwargs, files, "
        "and the checkpoints and ranks files of models trained elsewhere)",
    )
    parser.add_argument("configfile", help="the YAML config, e.g. config/config.yaml")
    parser.set_defaults(func=_check_config_command)


def _check_config_command(args: Any) -> int:
    from kgeval.config import ConfigError, check_input_files, load_config, resolve_data_dir
    from kgeval.ea.data import source_files as ea_source_files
    from kgeval.lp.datasets import source_files as lp_source_files
    from kgeval.lp.source_checks import check_source_files

    try:
        config = load_config(args.configfile)
        # the workflow downloads where the data_dir folder is absent (workflow/rules/common.smk): say so, as it does
        message = resolve_data_dir(config)
        if message:
            print(message, file=sys.stderr)
        entries = [e for key, spec in config["datasets"].items() for e in lp_source_files(key, spec, config["data_dir"])]
        entries += [e for key, spec in config["ea_datasets"].items() for e in ea_source_files(key, spec, config["data_dir"])]
        check_input_files(entries, config["data_dir"])
        check_source_files(config)  # models trained elsewhere: their checkpoint or ranks file, read in full
    except ConfigError as error:
        print(f"kgeval check-config: {error}", file=sys.stderr)
        return 1
    print(f"{args.configfile}: ok")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
