"""S6: sampled evaluation against the full filtered ranking (Cornell et al., ICDE 2025; Krichene and Rendle, KDD 2020).

Candidates are sampled per query (:mod:`~kgeval.lp.sampled.samplers`), every sampled candidate is scored by the
trained model and counted against the true answer (:mod:`~kgeval.studies.s6.evaluation`), the full filtered metrics
are estimated from those counts (:mod:`~kgeval.lp.sampled.estimators`, :mod:`~kgeval.lp.sampled.correction`) with
intervals over test triples and draws (:mod:`~kgeval.studies.s6.tables`), and the papers' statements are judged
(:mod:`~kgeval.studies.s6.claims`).
"""
