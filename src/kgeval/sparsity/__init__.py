"""S4: label sparsity in link-prediction evaluation (paper 003), on top of the ranks and top-k tables.

Modules:

- :mod:`.ranks`: exact ranks under another label set, derived from one filtered ranks table;
- :mod:`.metrics`: micro (Eq. 1) and macro (Eq. 2, plus MAP@20/nDCG@20 via ir-measures) metrics per label level;
- :mod:`.analysis`: Kendall's tau against pooling depth, per relation category, with relation re-weighting;
- :mod:`.stability`: data sensitivity (question subsets) and discriminative power (paired t-tests);
- :mod:`.plots`: the figures; :mod:`.pipeline`: file-level entry points for the workflow's scripts.

Label sets themselves live in :mod:`kgeval.labels`, relation categories in :mod:`kgeval.relation_categories`.
"""

from .analysis import kendall_tau, tau_by_category, tau_by_depth, tau_reweighted
from .metrics import aggregate_metrics, evaluate_label_levels, ir_measures_per_question, weighted_micro
from .ranks import RANK_TYPES, AnswerIndex
from .stability import discriminative_power, stability_table, subset_taus, unit_values

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
    "unit_values",
    "weighted_micro",
]
