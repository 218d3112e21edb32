"""How sure a value is: bootstrap resamples over independent units (test triples, test mappings), percentile intervals,
paired comparisons.

- :mod:`kgeval.uncertainty.resampling`: seeded streams, resample counts (the same for every model of a dataset and
  split), percentile intervals;
- :mod:`kgeval.uncertainty.bootstrap_metrics`: every registered rank metric on every resample, vectorized;
- :mod:`kgeval.uncertainty.comparisons`: sign-flip tests of paired differences (one sign per unit), Holm's correction;
- :mod:`kgeval.uncertainty.model_comparisons`: every two models of a dataset, split and seed compared on test triples;
- :mod:`kgeval.uncertainty.seed_comparisons`: every two models with several seeds compared over their seeds.

These modules define results (the intervals of ``tables/metrics.tsv``, ``tables/model_comparisons.tsv`` and the
claims tables).
"""
