"""Start-up cost of a job: modules whose jobs only read and write tables load neither torch, PyKEEN nor SciPy.

Every Snakemake job is a fresh Python process that imports its script's modules; torch costs about 2 s of CPU, PyKEEN's
models 3.5 s more, SciPy about 1 s (benchmarks/imports.py measures it per script). These checks guard what the
default run gains from importing them only where the work needs them. They check which modules get loaded, in a
fresh interpreter each, never a timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: module -> libraries its import must not load
LIGHT = {
    "kgeval.logs": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.metrics": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.io": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.claims": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.ea.evaluation": ("torch", "pykeen", "scipy", "sklearn"),
    "kgeval.lp.filtering": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.lp.ranking": ("pykeen", "scipy", "sklearn", "numba"),
    "kgeval.lp.scoring": ("pykeen", "scipy", "sklearn"),
    "kgeval.lp.fast_scorers": ("pykeen", "scipy", "sklearn"),
    "kgeval.lp.scorer_interface": ("pykeen", "scipy", "sklearn"),
    "kgeval.runtime.forkserver": ("numpy", "torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s1.rank_types": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s2.grid": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s3.jobs": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.jobs": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.release_files": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.released_claims": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.released_jobs": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.simulation": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s4.stability": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.assessment": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.calibration": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.claims": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.collation": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.figures": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.measures": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.negatives": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.settings": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.statistics": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
    "kgeval.studies.s5.tables": ("torch", "pykeen", "scipy", "sklearn", "matplotlib"),
}


def loaded_after_import(code: str) -> set[str]:
    """Top-level packages in ``sys.modules`` after running ``code`` in a fresh interpreter on this checkout's src."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    probe = code + "\nimport sys\nprint(' '.join(sorted({name.split('.')[0] for name in sys.modules})))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize("module", sorted(LIGHT))
def test_module_does_not_load_heavy_libraries(module):
    loaded = loaded_after_import(f"import {module}")
    assert not loaded & set(LIGHT[module]), f"importing {module} loads {sorted(loaded & set(LIGHT[module]))}"


def test_log_to_sets_torch_threads_only_when_torch_is_imported(tmp_path):
    # a job that never needs torch does not load it; one that does gets the rule's thread count, as before
    code = f"""
import sys
from kgeval.logs import log_to
with log_to({str(tmp_path / "a.log")!r}, 3):
    assert "torch" not in sys.modules
with log_to({str(tmp_path / "b.log")!r}, 1):
    import torch
    assert torch.get_num_threads() == 1, torch.get_num_threads()
assert not any(type(finder).__name__ == "_TorchThreadsOnImport" for finder in sys.meta_path)
"""
    loaded_after_import(code)


def test_log_to_sets_threads_of_an_already_imported_torch(tmp_path):
    code = f"""
import torch
from kgeval.logs import log_to
torch.set_num_threads(2)
with log_to({str(tmp_path / "a.log")!r}, 1):
    assert torch.get_num_threads() == 1
"""
    loaded_after_import(code)
