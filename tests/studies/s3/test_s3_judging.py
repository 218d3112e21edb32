"""The S3 claims' shared judging: relative drops, a part judged on its replicates, and a row made of parts that
never holds on a method below its published strength."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import Criterion
from kgeval.studies.s3.judging import Head, Part, S3Evidence, combine_parts, judged, relative_drop, replicates_of

HEAD = Head("s3.d.x", "a statement", "paper value", "tolerance")


def _evidence(below=None) -> S3Evidence:
    reps = {("d", "none", 0.2, "m"): {"hits@1_all": np.linspace(0.4, 0.6, 101)}}
    return S3Evidence(pd.DataFrame(), reps, below_strength=below or {}, strength_measured=True,
                      strength_checked=frozenset({"m"}))


def test_relative_drop_is_relative_to_the_better_value_and_nan_without_one():
    assert relative_drop(0.342, 0.303) == pytest.approx(0.114, abs=1e-3)  # the paper's MultiKE, "same"
    np.testing.assert_array_equal(relative_drop(np.array([0.0, 2.0]), np.array([1.0, 1.0])), [np.nan, 0.5])


def test_a_part_is_judged_on_the_percentile_interval_of_its_replicates():
    ev = _evidence()
    reps = replicates_of(ev, "d", ("none", 0.2), "m", "hits@1_all")
    assert judged(ev, "t", 0.5, reps, Criterion(lower=0.3), "m").judgement.verdict == "holds"
    assert judged(ev, "t", 0.5, reps, Criterion(lower=0.5), "m").judgement.verdict == "inconclusive"
    with pytest.raises(KeyError, match="no bootstrap replicates"):
        replicates_of(ev, "d", ("none", 0.02), "m", "hits@1_all")


def test_a_row_resting_on_a_method_below_strength_never_holds():
    reps = np.linspace(0.4, 0.6, 101)
    for below, verdict in (({}, "holds"), ({"m": "m at 0.5 of published"}, "inconclusive")):
        ev = _evidence(below)
        row = combine_parts(ev, HEAD, [judged(ev, "m 0.5", 0.5, reps, Criterion(lower=0.3), "m")], ["m"],
                            note="thresholds: here")
        assert row.verdict == verdict, row.reason
        assert "thresholds: here" in row.reason
    # nothing judged: not checkable, with what was computed kept in the kgeval column
    row = combine_parts(_evidence(), HEAD, [Part("m gain +0.02", None)], ["m"], remark="names carry it")
    assert row.verdict == "not checkable" and row.kgeval == "m gain +0.02" and row.reason == "names carry it"
