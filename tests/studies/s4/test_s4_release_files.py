"""The authors' released S4 files: a missing local copy names its config key; without one, the pinned files are
fetched."""

from __future__ import annotations

import pytest

from kgeval.studies.s4.release_files import RESULT_FILES, results_folder
from kgeval.studies.s4.released_results import released_metrics

pytestmark = pytest.mark.shared_data

HITS = (1, 3, 10)


def test_a_missing_results_folder_names_the_key(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="studies.s4.released_results.folder"):
        results_folder(tmp_path, "nowhere")


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
