"""Shared fixtures: paths to the repository and to the real data beside it."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# the tests (and the workflows they run) keep loaded datasets in a cache of their own (kgeval.lp.dataset_cache), not in
# the user's, removed when the session ends
if "KGEVAL_CACHE_DIR" not in os.environ:
    os.environ["KGEVAL_CACHE_DIR"] = tempfile.mkdtemp(prefix="kgeval-test-cache-")
    atexit.register(shutil.rmtree, os.environ["KGEVAL_CACHE_DIR"], ignore_errors=True)


#: small sizes keep the tests fast; ConvE needs an embedding dimension that factors into an image
SMALL_KWARGS = {
    "TransE": dict(embedding_dim=32),
    "DistMult": dict(embedding_dim=32),
    "ComplEx": dict(embedding_dim=16),
    "RotatE": dict(embedding_dim=16),
    "TuckER": dict(embedding_dim=32, relation_dim=16),
    "RESCAL": dict(embedding_dim=16),
    "ConvE": dict(embedding_dim=32, output_channels=4),
    "BoxE": dict(embedding_dim=16),
    "HolE": dict(embedding_dim=32),
    "QuatE": dict(embedding_dim=8),
    "TorusE": dict(embedding_dim=32),
}


#: a small DistMult that trains in a second on Nations (the training tests' model)
SMALL_TRAINING_SPEC = {
    "model": "DistMult",
    "model_kwargs": {"embedding_dim": 8},
    "optimizer_kwargs": {"lr": 0.01},
    "training_kwargs": {"num_epochs": 3, "batch_size": 128},
}


@pytest.fixture(scope="module")
def nations_lp():
    """Nations as kgeval loads it (PyKEEN's bundled copy)."""
    from kgeval.lp.datasets import load_dataset

    return load_dataset("nations", {"source": "pykeen", "name": "Nations"})


def shared_data_dir() -> Path:
    """The offline copies of the real datasets (``../shared/data``, or ``$KGEVAL_SHARED_DATA``)."""
    return Path(os.environ.get("KGEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


def fb15k237_factories(inverse: bool = False):
    """FB15k-237's PyKEEN triples factories from the shared data: ``(train, valid, test, inverse)``, ``inverse`` the
    training triples with inverse relations when asked for, else None. Skips the calling test where the data is
    absent."""
    import logging

    folder = shared_data_dir() / "fb15k237"
    if not (folder / "test.txt").is_file():
        pytest.skip(f"FB15k-237 not found at {folder} (set KGEVAL_SHARED_DATA to the shared data folder)")
    from pykeen.triples import TriplesFactory

    logging.getLogger("pykeen.triples").setLevel(logging.ERROR)
    train = TriplesFactory.from_path(folder / "train.txt")
    kwargs = dict(entity_to_id=train.entity_to_id, relation_to_id=train.relation_to_id)
    valid = TriplesFactory.from_path(folder / "valid.txt", **kwargs)
    test = TriplesFactory.from_path(folder / "test.txt", **kwargs)
    if not inverse:
        return train, valid, test, None
    return train, valid, test, TriplesFactory.from_path(folder / "train.txt", create_inverse_triples=True, **kwargs)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root."""
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests using it are skipped with a reason when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"real data folder {path} not present (set KGEVAL_SHARED_DATA to point at it)")
    return path


def copy_workflow(dest: Path) -> Path:
    """Copy what the workflow needs to run (no results, no venv) into ``dest``.

    ``src`` is copied too: the Snakefile puts ``<workflow>/src`` first on every job's path, so the copy runs this
    checkout's library even where the virtual environment has another checkout installed (``pip install -e``).
    """
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO / "Snakefile", dest / "Snakefile")
    for folder in ("workflow", "profiles", "scripts", "config", "envs", "src", "tests/data"):
        shutil.copytree(REPO / folder, dest / folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run_snakemake(workdir: Path, *args: str, timeout: int = 1500) -> "subprocess.CompletedProcess[str]":
    """Run snakemake (the venv's) in ``workdir``; fail the test with its output when it fails."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "snakemake", *args]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return proc


@pytest.fixture(scope="session")
def test_workflow(tmp_path_factory) -> Path:
    """Run the whole workflow (rule all) on config/test.yaml once, in a temporary directory; return that directory.

    Study tests read the tables behind their figures from ``<dir>/results``. Under pytest-xdist (the README's test
    command runs two workers) the workers share one run: the first to ask runs it, under a file lock in the folder the
    workers' temporary folders share, and the others wait for it and read it.
    """
    import fcntl
    import shutil

    if os.environ.get("KGEVAL_TEST_WORKFLOW"):
        # a finished run of config/test.yaml made elsewhere (the GPU test on a GPU host compares against the CPU run)
        workdir = Path(os.environ["KGEVAL_TEST_WORKFLOW"])
        if not (workdir / "results" / "test" / "metrics").is_dir():
            pytest.fail(f"KGEVAL_TEST_WORKFLOW={workdir}: no results/test/metrics there (a run of config/test.yaml)")
        return workdir
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    workdir, done = root / "test_workflow", root / "test_workflow.done"
    with open(root / "test_workflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(workdir, ignore_errors=True)  # a worker's run that failed
            copy_workflow(workdir)
            run_snakemake(workdir, "--cores", "2", "--configfile", "config/test.yaml", "--quiet", "rules")
            done.touch()
    return workdir


def pytest_collection_modifyitems(items):
    """The SLURM tests first: the one-node SLURM run spends much of its time waiting for the plugin's status checks,
    and under pytest-xdist (``--dist loadfile --no-loadscope-reorder``) its file then starts at once on one worker
    while the other worker runs the rest of the suite."""
    items.sort(key=lambda item: item.get_closest_marker("slurm") is None)


# --- a small synthetic EA pair whose alignment is known (S3 method tests) ------------------------------------


def synthetic_pair(n: int = 40, m: int = 160, r: int = 4, seed: int = 0, names: bool = True):
    """Two isomorphic random graphs (graph 2 = graph 1 with permuted ids); graph-2 names are graph-1 names with the
    last letter replaced by ``x`` (near-identical); alignment = the permutation."""
    import numpy as np

    from kgeval.ea.data import EAPair
    from kgeval.studies.s3.data import S3Pair

    rng = np.random.default_rng(seed)
    t1 = np.stack([rng.integers(n, size=m), rng.integers(r, size=m), rng.integers(n, size=m)], axis=1)
    t1 = np.unique(t1[t1[:, 0] != t1[:, 2]], axis=0)
    perm = rng.permutation(n)
    t2 = np.stack([perm[t1[:, 0]], t1[:, 1], perm[t1[:, 2]]], axis=1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=7)) for _ in range(n)]
    names1 = [(w,) if names else () for w in words]
    names2: list[tuple[str, ...]] = [()] * n
    for i, j in enumerate(perm):
        names2[j] = (words[i][:-1] + "x",) if names else ()
    pair = EAPair(
        name="synthetic",
        triples1=t1,
        triples2=t2,
        entity_labels1=[f"a{i}" for i in range(n)],
        entity_labels2=[f"b{i}" for i in range(n)],
        alignment=np.stack([np.arange(n), perm], axis=1),
    )
    return S3Pair(pair, names1, names2, None, None, "synthetic", "none")


@pytest.fixture
def make_pair():
    """:func:`synthetic_pair` as a fixture."""
    return synthetic_pair


@pytest.fixture
def hits_at_1():
    """:func:`left_hits_at_1` as a fixture."""
    return left_hits_at_1


def left_hits_at_1(scorer, test: np.ndarray, n: int) -> float:
    """Hits@1 of graph-1 -> graph-2 ranking against all n graph-2 entities."""
    import numpy as np

    from kgeval.studies.s3.models import rank_test_pairs

    result = rank_test_pairs(scorer, test, n, n, candidates="all", sides=("left",))["left"]
    return float((np.asarray(result.rank_realistic) <= 1).mean())
