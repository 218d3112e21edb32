"""Sampled evaluation: each query ranked against a seeded sample of its filtered candidates, and estimates of the
full filtered metrics from it.

:mod:`~kgeval.lp.sampled.samplers` draws the candidates, :mod:`~kgeval.lp.sampled.counts` scores them with the model
and counts how many beat the true answer, :mod:`~kgeval.lp.sampled.estimators` and
:mod:`~kgeval.lp.sampled.correction` turn the counts into estimates of the full metrics, and
:mod:`~kgeval.lp.sampled.estimates` writes them with intervals for a dataset configured under
``ranking.candidates`` (docs/sampled_evaluation.md). Study S6 measures how far those estimates lie from the full
ranking.
"""
