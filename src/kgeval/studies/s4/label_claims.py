"""S4's claims on the released data (Zhou et al. 2022, Sec. 3, Tables 1-2, Fig. 2): test-set sizes, the pool, the
KL divergences of relation distributions, the annotated examples."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import EXACT, NOT_CHECKABLE, Claim, ClaimFormat, numeric_claim, ordinal_claim
from kgeval.studies.s4.paper import PAPER_TABLE1, PAPER_TABLE2

__all__ = ["data_claims"]


def _table1_claims(table1: pd.DataFrame) -> list[Claim]:
    """Table 1: the sizes of the released test sets."""
    rows = []
    t1 = table1.set_index("test_set")
    for name, paper in PAPER_TABLE1.items():
        ours = tuple(int(t1.loc[name, c]) for c in ("num_triples", "num_positives", "num_negatives"))
        rows.append(
            numeric_claim(
                f"s4.table1_{name.lower().replace('-', '_')}",
                f"Table 1: {name} has {paper[0]:,} triples, {paper[1]:,} positives and {paper[2]:,} negatives",
                list(paper),
                list(ours),
                0,
                interval=EXACT,
            )
        )
    return rows


def _pool_claims(pool: pd.DataFrame) -> list[Claim]:
    """Sec. 3.1-3.2 and 4.2: the statistics of the pool."""
    rows = []
    stats = pool.set_index("statistic")["value"]
    rows.append(
        numeric_claim(
            "s4.sec3_1_pool",
            "Sec. 3.1: the pool holds 7,087 entities, 151 relations and 21,469 triples",
            [7087, 151, 21469],
            [int(stats["pool_entities"]), int(stats["pool_relations"]), int(stats["pool_triples"])],
            0,
            interval=EXACT,
        )
    )
    rows.append(
        numeric_claim(
            "s4.sec3_1_human_labelled",
            "Sec. 3.1: after filtering trivial triples, 12,599 pooled triples are left for manual labelling",
            12599,
            int(stats["human_labelled"]),
            0,
            interval=EXACT,
        )
    )
    rows.append(
        numeric_claim(
            "s4.sec3_2_test_relations",
            "Sec. 3.2: FB-Test-O has 224 different relations",
            224,
            int(stats["test_relations"]),
            0,
            interval=EXACT,
        )
    )
    rows.append(
        numeric_claim(
            "s4.sec4_2_added_at_depth2",
            "Sec. 4.2: pooling depth 2 adds 287 labelled positive triples",
            287,
            int(stats["added_positives_depth2"]),
            0,
            interval=EXACT,
        )
    )
    one_to_one = int(stats.get("added_positives_1-1", 0))
    rows.append(
        ordinal_claim(
            "s4.sec3_2_no_one_to_one_positives_added",
            "Sec. 3.2: new positives can be added to one-to-many relations but not to one-to-one relations",
            "0 added positives of 1-1 relations",
            f"{one_to_one} of 1-1, {int(stats.get('added_positives_1-N', 0))} of 1-N, "
            f"{int(stats.get('added_positives_N-1', 0))} of N-1, {int(stats.get('added_positives_N-N', 0))} of N-N "
            "(the release's categories)",
            one_to_one == 0,
            reason="" if one_to_one == 0 else "the release adds positives to one-to-one relations",
            interval=EXACT,
        )
    )
    return rows


def _kl_claims(kl: pd.DataFrame) -> list[Claim]:
    """Sec. 3.2, Fig. 2: the KL divergences between relation distributions."""
    rows = []
    kls = kl.set_index(["first", "second"])["kl"]
    for claim, statement, pair, paper in (
        (
            "s4.sec3_2_kl_sample",
            "Sec. 3.2: the KL divergence between the relation distributions of FB-Test-S and FB-Test-O is 0.0889",
            ("FB-Test-O", "FB-Test-S"),
            0.0889,
        ),
        (
            "s4.sec3_2_kl_whole_dataset",
            "Sec. 3.2: the KL divergence between FB-Test-O and the whole FB15k-237 is 0.2789",
            ("FB15k-237", "FB-Test-O"),
            0.2789,
        ),
        (
            "s4.sec3_2_kl_complete",
            "Sec. 3.2, Fig. 2: the KL divergence of FB-Test-S-C to FB-Test-O is 0.2386",
            ("FB-Test-O", "FB-Test-S-C"),
            0.2386,
        ),
    ):
        rows.append(
            numeric_claim(
                claim,
                statement,
                paper,
                float(kls.loc[pair]),
                1e-4,
                reason="the paper defines neither the direction nor the smoothing; kgeval's KL(first || second) with "
                "add-one smoothing over all 237 relations reproduces all three values",
                fmt=ClaimFormat(kgeval_digits=5),
                interval=EXACT,
            )
        )
    return rows


def data_claims(table1: pd.DataFrame, pool: pd.DataFrame, kl: pd.DataFrame, examples: pd.DataFrame) -> list[Claim]:
    """The claims on the released data (Sec. 3, Tables 1-2, Fig. 2): sizes, the pool, KL divergences, examples."""
    rows = _table1_claims(table1) + _pool_claims(pool) + _kl_claims(kl)
    rows.append(
        Claim(
            "s4.sec3_2_expert_agreement",
            "Sec. 3.2: an expert's relabelling of 200 annotated triples agrees with 92% of the pooled labels",
            "92%",
            "",
            "",
            NOT_CHECKABLE,
            "the release does not include the expert's 200 relabelled triples",
        )
    )
    rows.append(_table2_claim(examples))
    return rows


def _table2_claim(examples: pd.DataFrame) -> Claim:
    found, missing = 0, []
    shown = []
    for question, original, annotated in PAPER_TABLE2:
        row = examples.loc[(examples["relation"] == question["relation"]) & (examples["anchor"] == question["anchor"])]
        if row.empty:
            missing.append(f"the question ({question['anchor']}, {question['relation']}, ?)")
            continue
        row = row.iloc[0]
        ours_original = set(filter(None, str(row["original_answers"]).split("; ")))
        positives = set(filter(None, str(row["added_positives"]).split("; ")))
        negatives = set(filter(None, str(row["judged_negatives"]).split("; ")))
        for name in original:
            if name in ours_original:
                found += 1
            else:
                missing.append(f"{name} (original)")
        labels = []
        for name in annotated:
            if name in positives:
                labels.append(f"{name} Y")
                found += 1
            elif name in negatives:
                labels.append(f"{name} N")
                found += 1
            else:
                missing.append(f"{name} (annotation)")
        shown.append(f"{question['anchor']}: {', '.join(labels)}")
    total = sum(len(o) + len(a) for _, o, a in PAPER_TABLE2)
    return ordinal_claim(
        "s4.table2_examples",
        "Table 2: three FB-Test-S questions with their original answers and annotated (positive and negative) answers",
        f"{total} entities shown",
        f"{found} of {total} found with the same role in the release; labels: {' | '.join(shown)}",
        not missing,
        reason="" if not missing else f"not in the release: {', '.join(missing)}",
        tolerance="every shown entity",
        interval=EXACT,
    )
