"""How sure a value is: bootstrap resamples over evaluation queries, percentile intervals, paired comparisons.

- :mod:`kgeval.uncertainty.resampling`: seeded streams, resample counts (the same for every model of a dataset and
  split), percentile intervals;
- :mod:`kgeval.uncertainty.bootstrap_metrics`: every registered rank metric on every resample, vectorized;
- :mod:`kgeval.uncertainty.comparisons`: paired differences of two models, sign-flip tests, Holm's correction.

These modules define results (the intervals of ``tables/metrics.tsv``, ``tables/model_comparisons.tsv`` and the
claims tables).
"""
