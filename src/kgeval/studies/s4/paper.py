"""S4's numbers typed in from the paper (Zhou et al. 2022): Tables 1-4, Fig. 3's rank moves, Fig. 5's gaps.

The paper prints taus with 4 decimals, sometimes rounded (0.7949 for 0.79487) and sometimes truncated (-0.4358 for
-0.43590, 0.0889 for 0.08896), so a 4-decimal value holds within 1e-4.
"""

from __future__ import annotations

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "PAPER_FIG3_MOVES", "PAPER_FIG5_GAPS"]


#: Table 1: triples, positives, negatives
PAPER_TABLE1: dict[str, tuple[int, int, int]] = {
    "FB-Test-O": (20466, 20466, 0),
    "FB-Test-S": (1023, 1023, 0),
    "FB-Test-S-C": (22492, 2738, 19754),
}


#: Table 3: (side, category) -> tau of micro MRR, Hits@1, Hits@3, Hits@10 between FB-Test-S-C and FB-Test-S. The
#: extracted text of (head, N-1, Hits@1) reads "0099" (three digits), so it is checked to 1e-3.
PAPER_TABLE3: dict[tuple[str, str], tuple[float, float, float, float]] = {
    ("head", "1-1"): (1.0, 1.0, 1.0, 1.0),
    ("head", "1-N"): (0.0256, 0.0748, 0.3731, 0.4665),
    ("head", "N-1"): (0.1026, 0.099, 0.1782, 0.2857),
    ("head", "N-N"): (-0.3333, -0.0645, -0.4698, -0.1177),
    ("tail", "1-1"): (1.0, 1.0, 1.0, 1.0),
    ("tail", "1-N"): (-0.1026, 0.1353, 0.1988, -0.1420),
    ("tail", "N-1"): (0.5641, 0.7114, 0.6123, 0.7371),
    ("tail", "N-N"): (-0.1282, 0.0260, -0.2746, 0.3007),
}


#: Table 4: distribution -> tau of micro MR, MRR, Hits@1, Hits@3, Hits@10 between FB-Test-S and FB-Test-S-C
PAPER_TABLE4: dict[str, tuple[float, float, float, float, float]] = {
    "complete": (0.2308, -0.2308, -0.0519, -0.4358, 0.2598),
    "sparse": (0.2308, -0.2051, 0.0256, -0.2051, 0.3377),
}


#: Fig. 3 / Sec. 4.2: (code, rank on FB-Test-O, rank on FB-Test-S-C) by micro MRR
PAPER_FIG3_MOVES: tuple[tuple[str, int, int], ...] = (("A", 1, 8), ("D", 4, 13), ("L", 12, 4))


#: Table 2: (question, original answers shown, annotated answers shown)
PAPER_TABLE2: tuple[tuple[dict[str, str], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        {"side": "tail", "relation": "/people/person/profession", "anchor": "Shia LaBeouf"},
        ("Actor",),
        ("Voice Actor", "Comedian", "Model", "Television Director"),
    ),
    (
        {"side": "tail", "relation": "/people/ethnicity/languages_spoken", "anchor": "European American"},
        ("American English",),
        ("Spanish Language", "Danish Language", "Mandarin Chinese"),
    ),
    (
        {"side": "tail", "relation": "/location/location/contains", "anchor": "United States of America"},
        ("Valdosta", "Concord"),
        ("Manhattan", "Boston", "Chicago", "Chelsea", "Marrakesh"),
    ),
)


#: Sec. 4.2 / Fig. 5: the macro-minus-micro tau gap at pooling depth 10 (MRR, Hits@10)
PAPER_FIG5_GAPS: dict[str, float] = {"mrr": 0.41, "hits@10": 0.14}
