"""Docstrings and comments describe the code (docs/design.md, house style): no issue numbers, no commit hashes of
this repository, no history, no measurements. Figures and their sources live in docs/performance.md.

Scanned: every ``src/kgeval/**/*.py`` and ``scripts/**/*.py``, their docstrings (every bare string statement) and
comments only; string literals that reach outputs are not looked at.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCANNED = sorted((REPO / "src" / "kgeval").rglob("*.py")) + sorted((REPO / "scripts").rglob("*.py"))

#: an issue or pull-request number: "issue #33", "issue 15's", "(#31)"
ISSUE = re.compile(r"\bissues?\s*#?\d+|(?<![\w&])#\d{1,4}\b", re.IGNORECASE)
#: phrases that tell the code's history rather than what it does
HISTORY = re.compile(
    r"\b(?:as before|once imported|written before|used to be|previously|no longer used|formerly|until now)\b",
    re.IGNORECASE,
)
#: a figure with a time unit, or a speed ratio ("1.8x")
FIGURE = re.compile(
    r"\d(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|seconds|milliseconds|microseconds|nanoseconds|minutes)\b"
    r"|\d(?:\.\d+)?x\b"
)
#: words that make a figure on the same line a measurement (a comparison, a speed, a host)
MEASURED = re.compile(
    r"\b(?:against|instead of|faster|slower|took|speed|of CPU|Xeon|EPYC|profiler)\b", re.IGNORECASE
)
#: a token that may be an abbreviated commit hash: 7-40 hex digits, at least one digit and one letter
HEX = re.compile(r"(?<![\w.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w])")


def texts(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every line of a docstring or string statement, and of every comment, in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for i, line in enumerate(node.value.value.splitlines()):
                yield node.lineno + i, line
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string.lstrip("#")


def _where(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def pattern_findings(paths: list[Path]) -> list[str]:
    """``file:line: kind: text`` for each issue number, history phrase and measurement in ``paths``."""
    found = []
    for path in paths:
        for line, text in texts(path.read_text()):
            kinds = []
            if ISSUE.search(text):
                kinds.append("issue number")
            if HISTORY.search(text):
                kinds.append("history")
            if FIGURE.search(text) and MEASURED.search(text):
                kinds.append("measurement")
            found.extend(f"{_where(path)}:{line}: {kind}: {text.strip()}" for kind in kinds)
    return found


def commit_findings(paths: list[Path]) -> list[str]:
    """``file:line: commit <token>: text`` for each token that names a commit of this repository."""
    candidates: dict[str, list[str]] = {}
    for path in paths:
        for line, text in texts(path.read_text()):
            for token in HEX.findall(text):
                candidates.setdefault(token, []).append(f"{_where(path)}:{line}: commit {token}: {text.strip()}")
    if not candidates:
        return []
    tokens = sorted(candidates)
    answer = subprocess.run(
        ["git", "cat-file", "--batch-check"], cwd=REPO, input="".join(f"{t}\n" for t in tokens),
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    assert len(answer) == len(tokens), answer
    found = []
    for token, reply in zip(tokens, answer):
        fields = reply.split()
        if len(fields) == 3 and fields[1] == "commit":
            found.extend(candidates[token])
    return found


def _needs_git() -> None:
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("no git repository to resolve commit hashes in")


def test_no_issue_numbers_history_or_measurements():
    found = pattern_findings(SCANNED)
    assert not found, "docstrings and comments describe the code (figures: docs/performance.md):\n" + "\n".join(found)


def test_no_commit_hashes():
    _needs_git()
    found = commit_findings(SCANNED)
    assert not found, "commit hashes of this repository in docstrings or comments:\n" + "\n".join(found)


PLANTED_CLEAN = '''"""A kernel that sums rows in order: the 8 MiB blocks stay in cache (95 % interval, 0.706 -> 0.262)."""

X = 1  # the threshold under 0.1 s or under 100 timer resolutions
'''


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('"""Checked on the released tables (issue #33)."""\n', "issue number"),
        ("X = 1  # see (#31)\n", "issue number"),
        ('def f():\n    """The bound, as before: two rows."""\n', "history"),
        ("X = 1  # the S5 jobs once imported this module\n", "history"),
        ('"""On one thread of an Intel Xeon it took 0.10 s against torch\'s 0.55 s."""\n', "measurement"),
        ("X = 1  # compiled without vector lanes: 3.4x slower\n", "measurement"),
        ("X = 1  # torch's import (~2 s of CPU)\n", "measurement"),
    ],
)
def test_pattern_checks_can_fail(tmp_path: Path, text: str, kind: str):
    clean = tmp_path / "clean.py"
    clean.write_text(PLANTED_CLEAN)
    assert pattern_findings([clean]) == []
    planted = tmp_path / "planted.py"
    planted.write_text(text)
    found = pattern_findings([planted])
    assert [f.split(": ")[1] for f in found] == [kind], found


def test_commit_check_can_fail(tmp_path: Path):
    _needs_git()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    if not HEX.fullmatch(head):  # a short hash of digits only (or letters only): lengthen it until it has both
        full = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
        head = next(full.stdout[:n] for n in range(len(head), 41) if HEX.fullmatch(full.stdout[:n]))
    planted = tmp_path / "planted.py"
    planted.write_text(f'"""The kernel as measured at {head}."""\n\nX = 1  # the bits of {head}\n')
    found = commit_findings([planted])
    assert len(found) == 2 and all(f"commit {head}" in f for f in found), found
    unknown = tmp_path / "unknown.py"
    unknown.write_text('"""Not a commit: 0123abc, float32, deadbeef1."""\n')
    assert commit_findings([unknown]) == []
