"""The authors' released S4 files: a missing local copy names its config key; without one, the pinned files are
fetched."""

from __future__ import annotations

import pytest

from kgeval.studies.s4 import release_files
from kgeval.studies.s4.labels import RELEASE_FILES
from kgeval.studies.s4.release_files import (
    LABEL_FILES,
    RESULT_FILES,
    TEST_SETS,
    labels_folder,
    read_release_csv,
    results_folder,
    system_name,
)
from kgeval.studies.s4.released_results import released_metrics

HITS = (1, 3, 10)


def test_a_missing_results_folder_names_the_key(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="studies.s4.released_results.folder"):
        results_folder(tmp_path, "nowhere")


@pytest.mark.shared_data
def test_download_path_fetches_the_pinned_files(tmp_path, monkeypatch, shared_data) -> None:
    """Without data_dir the results are fetched from the pinned commit (pystow stands in by copying the local copy)."""
    import shutil as _shutil

    import pystow

    fetched = []

    def ensure(self, *subkeys, url, name=None, **kwargs):
        assert url.startswith(
            "https://raw.githubusercontent.com/zhouying20/kgc-sparsity/513479a4b30db70b37c705c488762e8d3b95a720/result/"
        )
        relative = url.split("/result/", 1)[1]
        target = self.join(*subkeys, name=name)
        _shutil.copy(shared_data / "released" / "kgc-sparsity" / relative, target)
        fetched.append(relative)
        return target

    monkeypatch.setattr(pystow.Module, "ensure", ensure)
    monkeypatch.setenv("PYSTOW_HOME", str(tmp_path))
    folder = results_folder(None, "released/kgc-sparsity")
    assert sorted(fetched) == sorted(RESULT_FILES)
    assert released_metrics(folder, HITS, 20)["system"].nunique() == 13


def test_the_file_lists() -> None:
    """Sec. 4's result files per test set (module docstring), each once; the label files extend the loader's."""
    assert len(set(RESULT_FILES)) == len(RESULT_FILES)
    assert {name.split("/")[0] for name in RESULT_FILES} == set(TEST_SETS)
    for test_set in TEST_SETS:
        assert f"{test_set}/evaluation.csv" in RESULT_FILES
    # the release has no p-values for the 1,023-triple sample
    assert {f for f in RESULT_FILES if f.endswith("discriminative_power.csv")} == {
        f"{t}/discriminative_power.csv" for t in TEST_SETS if t != "FB-Test-S"
    }
    for name in ("lp_per_rel.csv", "lp_per_rel_type.csv"):
        assert {f for f in RESULT_FILES if f.endswith(name)} == {f"{t}/{name}" for t in TEST_SETS if t != "WN18RR"}
    assert {f for f in RESULT_FILES if f.startswith("FB-Test-S-C/")} >= {
        "FB-Test-S-C/pooling_depth.csv",
        "FB-Test-S-C/lp_sample_rel_dist.csv",
    }
    assert LABEL_FILES[: len(RELEASE_FILES)] == tuple(RELEASE_FILES)
    assert len(set(LABEL_FILES)) == len(LABEL_FILES)
    assert "FB-Test-O/context/mid2name.txt" in LABEL_FILES


@pytest.mark.shared_data
def test_the_result_files_are_those_of_the_offline_copy(shared_data) -> None:
    root = shared_data / "released" / "kgc-sparsity"
    if not root.is_dir():
        pytest.skip(f"no offline copy of the released results under {root}")
    assert sorted(RESULT_FILES) == sorted(p.relative_to(root).as_posix() for p in root.rglob("*.csv"))


def write_files(root, names) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")


def test_results_folder_names_the_first_missing_file(tmp_path) -> None:
    folder = tmp_path / "released"
    write_files(folder, RESULT_FILES[:3])
    missing = folder / RESULT_FILES[3]
    with pytest.raises(FileNotFoundError, match="studies.s4.released_results.folder") as error:
        results_folder(tmp_path, "released")
    assert str(missing) in str(error.value)
    assert f"({len(RESULT_FILES) - 3} files)" in str(error.value)
    write_files(folder, RESULT_FILES)
    assert results_folder(tmp_path, "released") == folder
    # an absolute folder needs no data_dir
    assert results_folder(None, str(folder)) == folder


def test_labels_folder_names_the_missing_file(tmp_path) -> None:
    folder = tmp_path / "labels"
    write_files(folder, [name for name in LABEL_FILES if name != "FB-Test-S-C/supplementary/filtered.txt"])
    with pytest.raises(FileNotFoundError, match="studies.s4.released_results.labels") as error:
        labels_folder(tmp_path, "labels")
    assert str(folder / "FB-Test-S-C" / "supplementary" / "filtered.txt") in str(error.value)
    write_files(folder, LABEL_FILES)
    assert labels_folder(str(tmp_path), "labels") == folder


def test_without_a_local_folder_the_files_are_downloaded(tmp_path, monkeypatch) -> None:
    """folder null, or data_dir null with a relative folder: download (stood in for here); never a local lookup."""
    monkeypatch.setattr(release_files, "fetch_results", lambda: "downloaded results")
    monkeypatch.setattr(release_files, "fetch_release", lambda files: ("downloaded labels", files))
    assert results_folder(tmp_path, None) == "downloaded results"
    assert results_folder(None, "released/kgc-sparsity") == "downloaded results"
    assert labels_folder(None, "kgc-sparsity") == ("downloaded labels", LABEL_FILES)


def test_read_release_csv_shortens_system_names(tmp_path) -> None:
    (tmp_path / "FB-Test-O").mkdir()
    (tmp_path / "FB-Test-O" / "discriminative_power.csv").write_text(
        "SystemA,SystemB,Metric,p\n"
        "fb15k-237-hitter,fb15k-237-tucker,MRR,0.01\n"
        "wn18rr-rotate,my-fb15k-237-model,MRR,0.5\n"
    )
    table = read_release_csv(tmp_path, "FB-Test-O/discriminative_power.csv")
    assert list(table.columns) == ["SystemA", "SystemB", "Metric", "p"]
    assert list(table["SystemA"]) == ["hitter", "rotate"]
    # only a leading dataset prefix is dropped
    assert list(table["SystemB"]) == ["tucker", "my-fb15k-237-model"]
    assert list(table["p"]) == [0.01, 0.5]
    (tmp_path / "evaluation.csv").write_text("System,MRR\nfb15k-237-a,0.3\n")
    assert read_release_csv(tmp_path, "evaluation.csv")["System"].tolist() == ["a"]
    assert system_name("wn18rr-") == "" and system_name("fb15k237-x") == "fb15k237-x"

