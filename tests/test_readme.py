"""Every shell command in README.md's ```bash blocks runs: a documented command that fails cannot land.

Commands are found generically (every line of every ```bash block, so new sections are covered without touching this
file) and checked without doing their work:

- the install steps (``python3 -m venv ...``, ``pip install ...``) are left out; what follows them is checked;
- ``snakemake ...`` is dry-run (``-n``) in a copy of the workflow that sits beside ``shared/data`` as a checkout does; a
  command whose config reads ``data_dir`` is skipped, with the reason, where that folder is absent. A command that names
  a rule must not fall back to the default target (``all``): that catches a target swallowed by an option that takes a
  list (``--configfile``, ``--forcerun``);
- ``kgeval ...`` runs for real on the tables of the tiny run (the ``test_workflow`` fixture);
- ``python -m pytest ...`` collects the suite (``--collect-only``), ``python benchmarks/<x>.py`` prints its ``--help``.

Anything else fails with "no check for this command": teach this file how to check it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_workflow, shared_data_dir

pytestmark = pytest.mark.slow


def readme_commands(text: str) -> list[str]:
    """Every command line of the ```bash blocks (continuation lines joined, comment lines dropped)."""
    commands = []
    for block in re.findall(r"^```bash[ \t]*\n(.*?)^```", text, flags=re.S | re.M):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def checked_parts(command: str) -> list[list[str]]:
    """The ``&&``-separated parts of ``command`` that are checked: all but creating a venv and installing into it."""
    tokens = shlex.split(command, comments=True)
    parts, current = [], []
    for token in tokens + ["&&"]:
        if token == "&&":
            if current:
                parts.append(current)
            current = []
        else:
            current.append(token)

    def installs(part: list[str]) -> bool:
        program = Path(part[0]).name
        venv = program.startswith("python") and part[1:3] == ["-m", "venv"]
        pip = program in {"pip", "pip3"} or (program.startswith("python") and part[1:3] == ["-m", "pip"])
        return venv or (pip and "install" in part)

    return [part for part in parts if not installs(part)]


COMMANDS = readme_commands((REPO / "README.md").read_text(encoding="utf-8"))


def _option_values(args: list[str], option: str) -> list[str]:
    """Values following ``option`` up to the next option (Snakemake's list-taking options)."""
    values = []
    for index, token in enumerate(args):
        if token == option:
            for value in args[index + 1 :]:
                if value.startswith("-"):
                    break
                values.append(value)
    return values


def _data_dir(workdir: Path, args: list[str]) -> str | None:
    """The ``data_dir`` the command's config ends up with (the last --configfile, then --config overrides)."""
    configfiles = _option_values(args, "--configfile") or ["config/config.yaml"]
    path = workdir / configfiles[-1]
    if not path.is_file():
        return None  # not a config file (a swallowed target?): the dry run says so
    config = yaml.safe_load(path.read_text()) or {}
    data_dir = config.get("data_dir")
    for item in _option_values(args, "--config"):
        key, _, value = item.partition("=")
        if key == "data_dir":
            data_dir = None if value in ("null", "None", "") else value
    return data_dir


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the workflow with ``../shared/data`` beside it, as in a checkout next to the shared data."""
    root = tmp_path_factory.mktemp("readme")
    workdir = copy_workflow(root / "repo")
    if shared_data_dir().is_dir():
        (root / "shared").mkdir()
        (root / "shared" / "data").symlink_to(shared_data_dir())
    return workdir


@pytest.fixture(scope="module")
def rule_names(checkout) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--list-rules"], cwd=checkout, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}


def _env() -> dict[str, str]:
    """This checkout's library first on the path (the venv may have another checkout installed)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)}


def _run(cmd: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env())
    if proc.returncode != 0:
        pytest.fail(f"{shlex.join(cmd)} failed ({proc.returncode}) in {cwd}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def check_snakemake(args: list[str], checkout: Path, rule_names: set[str]) -> None:
    data_dir = _data_dir(checkout, args)
    if data_dir is not None and not (checkout / data_dir).is_dir():
        pytest.skip(f"needs data_dir {data_dir} (absent here)")
    proc = _run([sys.executable, "-m", "snakemake", "-n", *args], checkout)
    named = [token for token in args if token in rule_names and token != "all"]
    stats = proc.stdout.split("Job stats:", 1)[-1]
    if named and re.search(r"^all\s+1$", stats, flags=re.M):
        pytest.fail(f"names {named} but runs the default target (a target after a list-taking option?):\n{stats}")


def check_kgeval(args: list[str], tmp_path: Path, request) -> None:
    program = shutil.which("kgeval", path=str(Path(sys.executable).parent)) or shutil.which("kgeval")
    assert program, "the kgeval command is not installed"
    _run([program, args[0], "--help"], tmp_path)
    # the commands read the default run's tables: give them the tiny run's, in the same place
    tiny = request.getfixturevalue("test_workflow") / "results" / "test"
    (tmp_path / "results").mkdir()
    shutil.copytree(tiny / "tables", tmp_path / "results" / "tables")
    _run([program, *args], tmp_path)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command(command, checkout, rule_names, tmp_path, request):
    parts = checked_parts(command)
    assert parts, f"nothing to check in {command!r}"
    for part in parts:
        program = Path(part[0]).name
        if program == "snakemake":
            check_snakemake(part[1:], checkout, rule_names)
        elif program == "kgeval":
            check_kgeval(part[1:], tmp_path, request)
        elif program.startswith("python") and part[1:3] == ["-m", "pytest"]:
            _run([sys.executable, "-m", "pytest", "--collect-only", *part[3:]], REPO)
        elif program.startswith("python") and len(part) > 1 and part[1].startswith("benchmarks/"):
            _run([sys.executable, part[1], "--help"], REPO)
        else:
            pytest.fail(f"no check for this command: {shlex.join(part)} (teach tests/test_readme.py)")


def test_commands_are_found():
    """The parser sees the README's blocks (a broken fence would silently test nothing)."""
    assert len(COMMANDS) >= 8
    assert any("snakemake" in c and "--workflow-profile" in c for c in COMMANDS)
    assert checked_parts("python3 -m venv .venv && .venv/bin/pip install -r r.txt -e . && .venv/bin/snakemake -c1") == [
        [".venv/bin/snakemake", "-c1"]
    ]


@pytest.mark.parametrize(
    "command",
    [
        ".venv/bin/snakemake --cores 2 --forcerun plot_s2_mrr",  # no target: builds everything
        ".venv/bin/snakemake --cores 2 --configfile config/test.yaml study_s4",  # the target read as a config file
    ],
)
def test_broken_commands_are_caught(command, checkout, rule_names):
    """The two commands the README used to have (issue 16) fail the check."""
    with pytest.raises(pytest.fail.Exception):
        check_snakemake(checked_parts(command)[0][1:], checkout, rule_names)
