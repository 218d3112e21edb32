"""References that cannot go stale: every file path and every ``kgeval.…`` name cited in the README, docs/, the config
schema's descriptions and the library's docstrings exists, and docs/design.md's module map is the tree's.

The changelog is history (it names what existed then) and is not checked.
"""

from __future__ import annotations

import glob
import importlib
import re
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "kgeval"

#: a dotted name of the library (a module, or an attribute of one)
DOTTED = re.compile(r"\bkgeval(?:\.[A-Za-z_]\w*)+")
#: a path inside the repository, from one of its top folders (placeholders ``<...>``, ``{a,b}`` and ``*`` allowed)
PATH = re.compile(
    r"(?<![\w./-])((?:src|tests|scripts|workflow|config|docs|benchmarks|envs|profiles|\.ci)/"
    r"(?:[\w.*-]|<[\w ]+>|\{[\w,]+\}|/)*[\w*>}])"
)
#: file extensions that make a dotted word a file name, not a module (``envs/kgeval.yaml``)
FILE_SUFFIXES = ("yaml", "yml", "tsv", "json", "py", "txt", "log", "pt", "parquet", "pdf", "png", "md")
#: the worked example of docs/design.md ("Adding a study") names a study that does not exist yet
HYPOTHETICAL = re.compile(r"\bs6\b")


def cited_files() -> list[Path]:
    docs = [p for p in sorted((REPO / "docs").glob("*.md")) if p.name != "CHANGELOG.md"]
    return [REPO / "README.md", *docs, REPO / "workflow" / "schemas" / "config.schema.yaml", *sorted(SRC.rglob("*.py"))]


def name_exists(name: str) -> bool:
    """An importable module, or an attribute reachable from the longest importable prefix."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attribute in parts[i:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def path_exists(path: str, root: Path = REPO) -> bool:
    """A file or folder of the repository; with placeholders, some file that they match."""
    pattern = re.sub(r"<[^>]*>", "*", path)
    braces = re.search(r"\{([^}]*)\}", pattern)
    if braces:
        return all(
            path_exists(pattern[: braces.start()] + option + pattern[braces.end():], root)
            for option in braces.group(1).split(",")
        )
    return bool(glob.glob(str(root / pattern))) if "*" in pattern else (root / pattern).exists()


def stale_references(text: str, root: Path = REPO) -> list[str]:
    """The dotted names and paths in ``text`` that do not exist."""
    bad = []
    for match in DOTTED.finditer(text):
        name = match.group(0)
        following = text[match.end(): match.end() + 1]
        if name.rsplit(".", 1)[-1] in FILE_SUFFIXES or following in ("<", "{", "*"):
            continue  # a file name, or a template such as kgeval.studies.s<n>
        if not name_exists(name):
            bad.append(name)
    for match in PATH.finditer(text):
        path = match.group(1)
        if not HYPOTHETICAL.search(path) and not path_exists(path, root):
            bad.append(path)
    return sorted(set(bad))


@pytest.mark.parametrize("path", cited_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_cited_name_and_path_exists(path):
    bad = stale_references(path.read_text())
    assert not bad, f"{path.relative_to(REPO)} cites what does not exist: {bad}"


def test_the_reference_check_fails_on_a_planted_stale_reference():
    assert stale_references("see `tests/runtime/test_forkserver.py`") == ["tests/runtime/test_forkserver.py"]
    assert stale_references(":func:`kgeval.studies.s3.jobs.claim_settings`") == ["kgeval.studies.s3.jobs.claim_settings"]
    assert stale_references("``kgeval.distances.l1``") == ["kgeval.distances.l1"]
    assert stale_references("`workflow/rules/{data,nope}.smk`") == ["workflow/rules/{data,nope}.smk"]
    assert stale_references(
        "`kgeval.studies.s3.grid.claim_settings`, `tests/runtime/test_forkserver_*.py`, `envs/kgeval.yaml`, "
        "`kgeval.studies.s<n>.claims`, `workflow/rules/{data,train}.smk`, `tests/studies/s<n>/test_s<n>_<module>.py`"
    ) == []


# --- the module map of docs/design.md ---

MAP_START = "<!-- module map: generated from the tree; tests/test_references.py checks it -->"
MAP_END = "<!-- end of the module map -->"

#: what each folder of the library is, for the map (a new folder must say what it is here)
ROLES = {
    "": "shared by every stage and study",
    "ea": "the entity-alignment core",
    "engine": "speed wing: compiled kernels and memory tuning shared by the cores and studies",
    "lp": "the link-prediction core",
    "lp/engine": "speed wing: the ranking engine",
    "lp/engine/training": "speed wing: PyKEEN training patches and their kernels",
    "lp/sampled": "sampled evaluation: samplers, counts, estimators of the full metrics",
    "runtime": "speed wing: how jobs run: fork server, worker threads, first-use checks, usage records",
    "runtime/forkserver": "speed wing: the fork server",
    "studies": "the study packages, one per study",
    "studies/s1": "S1 rank definitions and adjusted mean rank",
    "studies/s2": "S2 unified framework of rank metrics",
    "studies/s3": "S3 entity alignment under industrial conditions",
    "studies/s4": "S4 label sparsity",
    "studies/s5": "S5 calibration",
    "studies/s6": "S6 sampled evaluation against the full ranking",
    "uncertainty": "intervals and paired tests, shared",
}


def module_map(src: Path = SRC) -> str:
    """The map of the library: each folder, what it is, and its modules (sorted), as docs/design.md shows it."""
    lines = []
    for folder in sorted({p.parent for p in src.rglob("*.py")}, key=lambda p: p.relative_to(src).parts):
        key = "/".join(folder.relative_to(src).parts)
        modules = sorted(p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__"))
        if not modules:
            continue
        label = f"src/kgeval/{key + '/' if key else ''}"
        lines.append(f"{label}  ({ROLES.get(key, 'NOT DESCRIBED: add it to ROLES in tests/test_references.py')})")
        lines += textwrap.wrap(", ".join(modules), 116, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines)


def test_the_module_map_in_design_md_is_the_tree():
    text = (REPO / "docs" / "design.md").read_text()
    assert MAP_START in text and MAP_END in text, f"docs/design.md lost its module map markers ({MAP_START})"
    shown = text.split(MAP_START, 1)[1].split(MAP_END, 1)[0].strip().removeprefix("```").removesuffix("```").strip()
    expected = module_map()
    assert shown == expected, f"docs/design.md's module map is stale; replace it with:\n{expected}"


def test_the_module_map_check_can_fail(tmp_path):
    (tmp_path / "lp").mkdir()
    (tmp_path / "lp" / "ranks.py").write_text("")
    (tmp_path / "newfolder").mkdir()
    (tmp_path / "newfolder" / "thing.py").write_text("")
    shown = module_map(tmp_path)
    assert "src/kgeval/lp/  (the link-prediction core)\n    ranks" in shown
    assert "NOT DESCRIBED" in shown
