"""S4's claims on the released label files: the paper's numbers (typed in here from the paper) hold, a changed one
differs."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import EXACT, MEASURED
from kgeval.studies.s4.label_claims import data_claims


def tables(**change) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Label-file tables holding the paper's numbers (Table 1, Sec. 3.1-3.2, Table 2), ``change`` applied to pool."""
    table1 = pd.DataFrame(
        [("FB-Test-O", 20466, 20466, 0), ("FB-Test-S", 1023, 1023, 0), ("FB-Test-S-C", 22492, 2738, 19754)],
        columns=["test_set", "num_triples", "num_positives", "num_negatives"],
    )
    stats = {
        "test_relations": 224,
        "pool_triples": 21469,
        "pool_entities": 7087,
        "pool_relations": 151,
        "human_labelled": 12599,
        "added_positives_depth2": 287,
        "added_positives_1-1": 0,
        "added_positives_1-N": 5,
        **change,
    }
    pool = pd.DataFrame(list(stats.items()), columns=["statistic", "value"])
    kl = pd.DataFrame(
        [("FB-Test-O", "FB-Test-S", 0.08891), ("FB15k-237", "FB-Test-O", 0.27893), ("FB-Test-O", "FB-Test-S-C", 0.23861)],
        columns=["first", "second", "kl"],
    )
    examples = pd.DataFrame(
        [
            ("/people/person/profession", "Shia LaBeouf", "Actor", "Voice Actor; Comedian", "Model; Television Director"),
            (
                "/people/ethnicity/languages_spoken",
                "European American",
                "American English",
                "Spanish Language; Danish Language",
                "Mandarin Chinese",
            ),
            (
                "/location/location/contains",
                "United States of America",
                "Valdosta; Concord",
                "Manhattan; Boston; Chicago; Chelsea",
                "Marrakesh",
            ),
        ],
        columns=["relation", "anchor", "original_answers", "added_positives", "judged_negatives"],
    )
    return table1, pool, kl, examples


def verdicts(*args) -> dict[str, str]:
    return {c.claim: c.verdict for c in data_claims(*args)}


def test_the_paper_numbers_hold() -> None:
    got = verdicts(*tables())
    assert got.pop("s4.sec3_2_expert_agreement") == "not checkable"
    assert got and set(got.values()) == {"holds"}, got
    assert {"s4.table1_fb_test_s_c", "s4.sec3_1_pool", "s4.sec3_2_kl_sample"} <= set(got)


def test_a_changed_number_differs() -> None:
    assert verdicts(*tables(pool_triples=21470))["s4.sec3_1_pool"] == "differs"
    assert verdicts(*tables(**{"added_positives_1-1": 3}))["s4.sec3_2_no_one_to_one_positives_added"] == "differs"
    table1, pool, kl, examples = tables()
    kl.loc[0, "kl"] = 0.0895
    assert verdicts(table1, pool, kl, examples)["s4.sec3_2_kl_sample"] == "differs"
    table1.loc[2, "num_negatives"] = 19753
    assert verdicts(table1, pool, kl, examples)["s4.table1_fb_test_s_c"] == "differs"


def test_label_file_claims_are_exact_and_measured() -> None:
    """Counts and KL divergences recomputed from the released label files involve no sampling."""
    for claim in data_claims(*tables()):
        if claim.verdict != "not checkable":
            assert claim.interval == EXACT and claim.basis == MEASURED, claim
