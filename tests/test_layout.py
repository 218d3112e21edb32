"""The library's import rules and the rule -> script -> library naming map (docs/design.md, "Layout").

- the cores (``kgeval.lp``, ``kgeval.ea``) and the shared modules never import a study;
- a study package never imports another study's package;
- no two modules import each other, directly or through others (no import circle);
- each study's rule file points only into that study's scripts folder, the core rule files only into ``scripts/lp``,
  and every script is named after a rule that runs it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"

#: modules shared by every study (they sit directly under kgeval/)
SHARED = {
    "metrics", "io", "tables", "logs", "runtime", "engine", "plotting", "config", "cli", "claims", "schema_docs", "uncertainty",
    "__init__",
    "__main__",
}
#: scripts that serve several rules of one study; each maps to those rules
SHARED_SCRIPTS = {
    "s1/plot_testsize": {"plot_s1_testsize_each", "plot_s1_testsize_adjusted_each"},
    "s3/table_results": {"table_s3_overall", "table_s3_ablations"},
    "s5/plot_figure": {"plot_s5_calibration", "plot_s5_strategies", "plot_s5_platt"},
    "s2/plot_family": None,  # one rule per metric family, generated in a loop (plot_s2_<family>)
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every kgeval module that ``path`` imports, at module level or inside a function."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("kgeval"))
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (use absolute kgeval.* imports)"
            if node.module and node.module.startswith("kgeval"):
                found.add(node.module)
                # "from kgeval.studies.s4 import jobs" imports the submodule kgeval.studies.s4.jobs
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    if (SRC / Path(*candidate.split("."))).with_suffix(".py").exists():
                        found.add(candidate)
    return found


MODULES = {module_name(p): p for p in sorted((SRC / "kgeval").rglob("*.py"))}
GRAPH = {name: {m for m in imports_of(path) if m in MODULES and m != name} for name, path in MODULES.items()}


def layer(name: str) -> str:
    parts = name.split(".")
    if len(parts) >= 3 and parts[1] == "studies":
        return parts[2]
    if len(parts) >= 2 and parts[1] in ("lp", "ea"):
        return parts[1]
    if len(parts) == 2 and parts[1] == "studies":
        return "studies"
    return "shared"


def test_every_module_has_a_place():
    for name in MODULES:
        parts = name.split(".")
        if len(parts) == 2:
            assert parts[1] in SHARED | {"lp", "ea", "studies"}, f"{name}: put it in lp/, ea/ or a study package"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer(n) in ("lp", "ea", "shared") and n != "kgeval.cli"))
def test_core_and_shared_never_import_a_study(name):
    bad = sorted(m for m in GRAPH[name] if ".studies" in m)
    assert not bad, f"{name} imports {bad}: the cores and shared modules must not depend on a study"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer(n).startswith("s")))
def test_a_study_never_imports_another_study(name):
    own = layer(name)
    bad = sorted(m for m in GRAPH[name] if layer(m).startswith("s") and layer(m) not in (own, "shared"))
    assert not bad, f"{name} (study {own}) imports {bad}"


def test_the_lp_core_does_not_import_the_ea_core():
    bad = sorted((n, m) for n in MODULES if layer(n) == "lp" for m in GRAPH[n] if layer(m) == "ea")
    assert not bad, bad


def test_no_import_circle():
    """Depth-first search for a back edge in the module import graph."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            # a package's __init__ importing its own submodules is not a circle
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                circle = stack[stack.index(nxt):] + [nxt]
                if not (node.startswith(nxt + ".")):  # a submodule importing its own package's __init__
                    pytest.fail("import circle: " + " -> ".join(circle))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)


# --- the speed wing (docs/design.md, "The speed wing"): what only makes kgeval fast, in three packages of its own ---

#: the packages that only make kgeval fast; nothing in them changes a number in a table
WING = ("kgeval.runtime", "kgeval.engine", "kgeval.lp.engine")

#: the layers, lowest first: a module imports only from its own layer or a lower one (longest prefix wins)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kgeval.config", "kgeval.io", "kgeval.logs"),
    ("kgeval.runtime",),
    ("kgeval.engine",),
    ("kgeval.metrics", "kgeval.tables", "kgeval.plotting", "kgeval.claims", "kgeval.uncertainty", "kgeval.schema_docs"),
    ("kgeval.lp.engine",),
    ("kgeval.lp", "kgeval.ea"),
    ("kgeval.studies",),
    ("kgeval", "kgeval.cli", "kgeval.__main__"),
)


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def in_wing(name: str) -> bool:
    return any(in_package(name, package) for package in WING)


def layer_of(name: str) -> tuple[int, str]:
    """(layer index, the package or module of :data:`LAYERS` that holds ``name``): the longest matching prefix."""
    found = [(len(p), i, p) for i, group in enumerate(LAYERS) for p in group if in_package(name, p)]
    assert found, f"{name}: not in any layer of tests/test_layout.py's LAYERS (add its package there)"
    _, index, package = max(found)
    return index, package


def outside_imports(path: Path) -> list[str]:
    """The imports of numba or kgeval.runtime in a module's source (module level or inside a function)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found += [f"{n} (line {node.lineno})" for n in names if n == "numba" or n.startswith(("numba.", "kgeval.runtime"))]
    return found


def back_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Imports that run from a lower layer up to a higher one."""
    return sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if layer_of(b)[0] > layer_of(a)[0])


def test_only_the_wing_imports_numba_or_the_runtime():
    bad = {name: found for name, path in MODULES.items() if not in_wing(name) and (found := outside_imports(path))}
    assert not bad, f"modules outside the speed wing {WING} import numba or kgeval.runtime: {bad}; move the code into the wing"


def test_the_wing_check_can_fail(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    import numba\n    from kgeval.runtime.workers import worker_pool\n")
    assert outside_imports(planted) == ["numba (line 2)", "kgeval.runtime.workers (line 3)"]
    planted.write_text("from kgeval.engine.memory import reuse_freed_memory\n")
    assert outside_imports(planted) == []


def test_compiled_modules_are_named_as_kernels():
    """A module that imports numba lies in the wing and says what it is: ``<name>_kernel`` or ``<name>_kernels``."""
    bad = [
        name for name, path in MODULES.items()
        if any(i.startswith("numba") for i in outside_imports(path))
        and not name.rsplit(".", 1)[-1].endswith(("_kernel", "_kernels"))
    ]
    assert not bad, f"modules that import numba without a kernel's name: {bad}"


def test_every_module_has_a_layer():
    for name in MODULES:
        layer_of(name)


def test_no_import_runs_back_up_a_layer():
    assert not back_arrows(GRAPH), f"imports from a lower layer up to a higher one: {back_arrows(GRAPH)}"


def test_the_back_arrow_check_can_fail():
    planted = {"kgeval.engine.nearest_kernel": {"kgeval.lp.engine.block_kernels"}, "kgeval.lp.ranking": {"kgeval.io"}}
    assert back_arrows(planted) == ["kgeval.engine.nearest_kernel -> kgeval.lp.engine.block_kernels"]


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between folders (a module's package; a package's ``__init__`` is in its own folder)."""
    folders: dict[str, set[str]] = {}

    def folder(name: str) -> str:
        return name if MODULES.get(name, Path()).name == "__init__.py" else name.rpartition(".")[0]

    for a, bs in graph.items():
        folders.setdefault(folder(a), set()).update(folder(b) for b in bs if folder(b) != folder(a))
    return folders


def test_folders_do_not_depend_on_each_other():
    """No two folders import from each other, directly or through others (a package's __init__ re-exporting its own
    submodules aside)."""
    folders = folder_graph(GRAPH)
    seen: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(folders.get(node, ())):
            if nxt.startswith(node + ".") or node.startswith(nxt + "."):
                continue  # a package and its own subpackages: the layers above decide their direction
            if seen.get(nxt) == 1:
                pytest.fail("folders import each other: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in seen:
                visit(nxt, path + [nxt])
        seen[node] = 2

    for name in sorted(folders):
        if name not in seen:
            visit(name, [name])


def rule_scripts() -> list[tuple[str, str, str]]:
    """(rule file, rule name, script path relative to scripts/ without .py) for every rule with a script."""
    found = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        rule = None
        for line in smk.read_text().splitlines():
            m = re.match(r"\s*rule (\w+)", line)
            if m:
                rule = m.group(1)
            m = re.search(r'"\.\./\.\./scripts/([\w/]+)\.py"', line)
            if m:
                found.append((smk.stem, rule, m.group(1)))
    return found


def test_rule_files_point_into_their_own_scripts():
    for smk, rule, script in rule_scripts():
        folder = script.split("/")[0]
        study = re.match(r"(s\d)", smk)
        expected = study.group(1) if study else "lp"
        assert folder == expected, f"workflow/rules/{smk}.smk rule {rule} runs scripts/{script}.py, outside scripts/{expected}/"


def test_scripts_are_named_after_their_rules():
    used = set()
    for smk, rule, script in rule_scripts():
        used.add(script)
        folder, stem = script.split("/")
        if script in SHARED_SCRIPTS:
            allowed = SHARED_SCRIPTS[script]
            assert allowed is None or rule in allowed, f"{script} is run by {rule}, not one of {allowed}"
            continue
        name = rule.removesuffix("_each")  # the per-dataset rule behind a wildcard-free target of the same name
        name = name.replace(f"_{folder}_", "_").replace(f"_{folder}", "")
        # a released-tier rule may share the script of its trained-tier twin (plot_s4_released_x runs s4/plot_x)
        assert stem in (name, name.replace("_released_", "_", 1)), (
            f"rule {rule} runs scripts/{script}.py; name the script after the rule"
        )
    on_disk = {str(p.relative_to(REPO / "scripts").with_suffix("")) for p in (REPO / "scripts").rglob("*.py")}
    assert on_disk == used, f"scripts no rule runs: {sorted(on_disk - used)}"


def report_rules() -> list[str]:
    """Every rule with a report() output, from the rule files' text."""
    names = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule \w+:)", smk.read_text()):
            m = re.match(r"rule (\w+):", block)
            if m and "report(" in block:
                names.append(m.group(1))
    return names


@pytest.mark.slow
def test_every_report_output_has_a_wildcard_free_target():
    """`snakemake <name>` works for every figure and table: a rule with wildcards has a target of its name sans _each."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--list-target-rules", "--configfile", "config/test.yaml"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )
    targets = set(proc.stdout.split())
    names = report_rules()
    assert len(names) > 20
    missing = sorted(n for n in names if n.removesuffix("_each") not in targets)
    assert not missing, f"figure/table rules without a wildcard-free target: {missing}"


def test_every_script_hands_itself_to_the_fork_server_first():
    """A script's first statements (after its docstring) import and call run_in_forkserver, before anything else is
    imported: a script that imports first pays its imports in its own process even when the server could take it."""
    import ast

    for path in sorted((REPO / "scripts").rglob("*.py")):
        body = ast.parse(path.read_text()).body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]
        first = [ast.unparse(node) for node in body[:2]]
        assert first == ["from kgeval.runtime.forkserver import run_in_forkserver", "run_in_forkserver()"], (
            f"{path.relative_to(REPO)} starts with {first}; begin it with "
            "'from kgeval.runtime.forkserver import run_in_forkserver' and 'run_in_forkserver()'"
        )


# --- size rules (docs/design.md): modules split by concern, short functions, settings objects for long signatures ---

#: a library module's line limit, a function's (its whole def, docstring included) and a signature's parameter limit
MODULE_LINES, FUNCTION_LINES, MAX_PARAMETERS = 500, 80, 9


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_library_modules_are_short():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split them by concern): {long}"


def test_library_functions_are_short_and_take_few_parameters():
    long, wide = [], []
    for name, path in MODULES.items():
        for fn in _functions(path):
            if fn.end_lineno - fn.lineno + 1 > FUNCTION_LINES:
                long.append(f"{name}.{fn.name} ({fn.end_lineno - fn.lineno + 1} lines)")
            args = fn.args
            count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
            if count > MAX_PARAMETERS:
                wide.append(f"{name}.{fn.name} ({count} parameters)")
    assert not long, f"functions over {FUNCTION_LINES} lines: {long}"
    assert not wide, f"functions with more than {MAX_PARAMETERS} parameters (pass a settings object): {wide}"


def _schema_defaults() -> dict[str, list]:
    """Every key name of the config schema that has a default, with its defaults (a name may occur in several places)."""
    import yaml

    found: dict[str, list] = {}

    def walk(node):
        if isinstance(node, dict):
            for name, child in node.get("properties", {}).items():
                if isinstance(child, dict) and "default" in child:
                    found.setdefault(name, []).append(child["default"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()))
    return found


def _repeated_defaults(text: str, where: str, defaults: dict[str, list]) -> list[str]:
    """``.get("key", literal)`` calls whose literal is the schema's default of ``key``."""
    bad = []
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value in defaults
        ):
            try:
                value = ast.literal_eval(node.args[1])
            except ValueError:
                continue
            if value in defaults[node.args[0].value] and value not in ({}, [], None):
                bad.append(f"{where}:{node.lineno} .get({node.args[0].value!r}, {value!r})")
    return bad


def test_no_schema_default_is_repeated_in_the_code():
    """Defaults live in the schema only: code reads the validated config (or kgeval.config.schema_default)."""
    defaults = _schema_defaults()
    bad = []
    for name, path in MODULES.items():
        bad += _repeated_defaults(path.read_text(), name, defaults)
    for path in sorted((REPO / "scripts").rglob("*.py")):
        bad += _repeated_defaults(path.read_text(), str(path.relative_to(REPO)), defaults)
    assert not bad, f"schema defaults repeated in code: {bad}"


def test_repeated_default_check_can_fail():
    defaults = {"top_k": [10]}
    assert _repeated_defaults('x = spec.get("top_k", 10)', "m", defaults) == ["m:1 .get('top_k', 10)"]
    assert _repeated_defaults('x = spec.get("top_k", 5)', "m", defaults) == []


def _has_logic(path: Path) -> bool:
    """A module defines a function or a method (constants and plain dataclasses need no test file of their own)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        if isinstance(node, ast.ClassDef) and any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in node.body):
            return True
    return False


def test_names_of_a_module_with_logic_test_file():
    """``tests/**/test_<m>.py`` exists for each module ``m`` with logic (``test_ea_<m>`` in ea/, ``test_s<n>_<m>`` in a
    study, ``test_forkserver_<m>`` in runtime/forkserver/)."""
    names = {p.stem for p in (REPO / "tests").rglob("test_*.py")}
    missing = []
    for name, path in MODULES.items():
        parts = name.split(".")
        if path.name in ("__init__.py", "__main__.py") or not _has_logic(path):
            continue
        stem = parts[-1]
        accepted = {f"test_{stem}", f"test_ea_{stem}", f"test_forkserver_{stem}"}
        if parts[1] == "studies":
            accepted.add(f"test_{parts[2]}_{stem}")
        if not accepted & names:
            missing.append(name)
    assert not missing, f"modules with logic and no test file of their name: {missing}"


# --- rule files (docs/design.md, "Adding a study"): every helper in workflow/rules/common.smk, rules elsewhere ---

RULES_DIR = REPO / "workflow" / "rules"

#: what a rule file holds at its top level besides comments: rules, the loops that make rules, directives, and the
#: closing brackets of a loop's header
RULE_FILE_TOP_LEVEL = re.compile(r"(rule \w|use rule |for |wildcard_constraints:|localrules:|ruleorder:|include:|[)\]}])")


def rule_file_helpers(text: str) -> list[str]:
    """The lines of a rule file's text that belong in common.smk ("<line number>: <line>"): a function, a lambda, or
    top-level code other than rules, the loops that make rules, and directives."""
    bad = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0].rstrip()
        if not code:
            continue
        top_level_code = not code[0].isspace() and not RULE_FILE_TOP_LEVEL.match(code)
        if re.match(r"\s*(async\s+)?def ", code) or re.search(r"\blambda\b", code) or top_level_code:
            bad.append(f"{number}: {line.strip()}")
    return bad


def test_rule_files_hold_rules_only():
    bad = {
        smk.name: found
        for smk in sorted(RULES_DIR.glob("*.smk"))
        if smk.name != "common.smk" and (found := rule_file_helpers(smk.read_text()))
    }
    assert not bad, f"helpers in rule files (move them to workflow/rules/common.smk, under the study's header): {bad}"


def test_common_smk_holds_helpers_and_no_rule():
    """common.smk holds the helpers: named functions, no rule and no lambda (a rule names its input function)."""
    text = (RULES_DIR / "common.smk").read_text()
    rules = re.findall(r"^(?:rule|checkpoint|use rule)\b.*", text, flags=re.M)
    lambdas = [line.strip() for line in text.splitlines() if re.search(r"\blambda\b", line.split("#", 1)[0])]
    assert not rules, f"rules in workflow/rules/common.smk (move them to a rule file): {rules}"
    assert not lambdas, f"lambdas in workflow/rules/common.smk (define a named function): {lambdas}"


def test_the_rule_file_check_can_fail():
    planted = (
        "# S9: a comment may say lambda or def\n"
        "S9 = config['studies']['s9']\n"
        "if enabled('s9'):\n"
        "    skip('s9', 'reason')\n"
        "\n"
        "def s9_files(wildcards):\n"
        "    return []\n"
        "\n"
        "rule table_s9_x:\n"
        "    params:\n"
        "        dataset=lambda wildcards: wildcards.dataset,\n"
    )
    assert rule_file_helpers(planted) == [
        "2: S9 = config['studies']['s9']",
        "3: if enabled('s9'):",
        "6: def s9_files(wildcards):",
        "11: dataset=lambda wildcards: wildcards.dataset,",
    ]
    clean = (
        "# S9\n\n\nwildcard_constraints:\n    s9_key=r'\\d+',\n\n\nrule table_s9_x:\n    input:\n        s9_files,\n"
        "    params:\n        dataset=s9_dataset_key,  # a named function of common.smk\n\n\n"
        "for _name in (\n    'table_s9_x',\n):\n\n    rule:\n        name:\n            _name\n"
    )
    assert rule_file_helpers(clean) == []


# --- the study list: kgeval.studies.STUDIES, which workflow/rules/common.smk and the tests read ---


def rule_file_studies(names: list[str], studies: tuple[str, ...]) -> list[str]:
    """The study rule files (``s<n>*.smk``) whose names do not start with a study of ``studies`` (``<study>.smk`` or
    ``<study>_<part>.smk``): common.smk would never include them."""
    return sorted(n for n in names if not any(re.fullmatch(rf"{s}(_\w+)?\.smk", n) for s in studies))


def test_the_study_list_is_kgeval_studies():
    """The schema's study sections, the study packages, the script and test folders, and the study rule files (which
    common.smk finds by the study's name) are those of STUDIES."""
    import yaml

    from kgeval.studies import STUDIES

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert tuple(schema["properties"]["studies"]["properties"]) == STUDIES
    for folder in (SRC / "kgeval" / "studies", REPO / "scripts", REPO / "tests" / "studies"):
        found = {p.name for p in folder.iterdir() if p.is_dir() and re.fullmatch(r"s\d+", p.name)}
        assert found == set(STUDIES), f"{folder.relative_to(REPO)}: {sorted(found)}, kgeval.studies.STUDIES: {STUDIES}"
    names = [p.name for p in RULES_DIR.glob("s[0-9]*.smk")]
    assert not rule_file_studies(names, STUDIES), f"rule files of no study in STUDIES: {rule_file_studies(names, STUDIES)}"
    for study in STUDIES:
        assert any(n == f"{study}.smk" or n.startswith(f"{study}_") for n in names), f"{study} has no rule file"


def test_the_study_rule_file_check_can_fail():
    assert rule_file_studies(["s1_ranks.smk", "s2.smk", "s9.smk", "s1x.smk"], ("s1", "s2")) == ["s1x.smk", "s9.smk"]
