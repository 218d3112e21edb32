"""S4: label sparsity in link-prediction evaluation (paper 003), on top of the ranks and top-k tables.

Modules:

- :mod:`.ranks`: exact ranks under another label set, derived from one filtered ranks table;
- :mod:`.metrics`: micro (Eq. 1) and macro (Eq. 2, plus MAP@20/nDCG@20 via ir-measures) metrics per label level;
- :mod:`.analysis`: Kendall's tau against pooling depth, per relation category, with relation re-weighting;
- :mod:`.stability`: data sensitivity (triple subsets, the paper's; question subsets, an extension) and
  discriminative power (paired t-tests);
- :mod:`.labels`: label sets (sparse, pooled, released) behind one interface;
- :mod:`.categories`: relation categories (1-1, 1-N, N-1, N-N);
- :mod:`.released`: the paper-scale tables and label-file statistics from the authors' released results;
- :mod:`.claims`: the paper's claims checked on the released results;
- :mod:`.figures`: the figures; :mod:`.jobs`: one file-in/file-out function per workflow job.
"""

from kgeval.studies.s4.analysis import kendall_tau, tau_by_category, tau_by_depth, tau_reweighted
from kgeval.studies.s4.metrics import aggregate_metrics, evaluate_label_levels, ir_measures_per_question, weighted_micro
from kgeval.studies.s4.ranks import RANK_TYPES, AnswerIndex
from kgeval.studies.s4.stability import (
    discriminative_power,
    stability_table,
    subset_taus,
    triple_subset_taus,
    triple_units,
    unit_values,
)

__all__ = [
    "RANK_TYPES",
    "AnswerIndex",
    "aggregate_metrics",
    "discriminative_power",
    "evaluate_label_levels",
    "ir_measures_per_question",
    "kendall_tau",
    "stability_table",
    "subset_taus",
    "tau_by_category",
    "tau_by_depth",
    "tau_reweighted",
    "triple_subset_taus",
    "triple_units",
    "unit_values",
    "weighted_micro",
]
