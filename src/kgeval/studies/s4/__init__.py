"""S4: label sparsity in link-prediction evaluation (paper 003), on top of the ranks and top-k tables.

Modules:

- :mod:`.ranks`: exact ranks under another label set, derived from one filtered ranks table;
- :mod:`.metrics`: micro (Eq. 1) and macro (Eq. 2, plus MAP@20/nDCG@20 via ir-measures) metrics per label level;
- :mod:`.analysis`: Kendall's tau against pooling depth, per relation category, with relation re-weighting;
- :mod:`.stability`: data sensitivity (triple subsets, the paper's; question subsets, an extension) and
  discriminative power (paired sign-flip tests, the paper's t-test beside them);
- :mod:`.labels`: label sets (sparse, pooled, released) behind one interface;
- :mod:`.categories`: relation categories (1-1, 1-N, N-1, N-N);
- :mod:`.release_files`: where the authors' released results and label files are, and reading them;
- :mod:`.released_results`: the paper-scale tables from the released per-system results;
- :mod:`.released_labels`: Table 1, the pool statistics, Fig. 2 and Table 2 from the released label files;
- :mod:`.settings`: the settings objects of the label, level and stability jobs;
- :mod:`.paper`: the paper's numbers; :mod:`.claims`: the claims on this tier's systems;
  :mod:`.released_claims` and :mod:`.label_claims`: the claims on the released results and label files;
- :mod:`.figures`: the figures; :mod:`.jobs`: one file-in/file-out function per workflow job;
  :mod:`.released_jobs`: the same for the released-results rules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgeval.studies.s4.analysis import kendall_tau, tau_by_category, tau_by_depth, tau_reweighted
    from kgeval.studies.s4.metrics import (
        aggregate_metrics,
        evaluate_label_levels,
        ir_measures_per_question,
        weighted_micro,
    )
    from kgeval.studies.s4.ranks import RANK_TYPES, AnswerIndex
    from kgeval.studies.s4.stability import (
        discriminative_power,
        stability_table,
        subset_taus,
        triple_subset_taus,
        triple_units,
        unit_values,
    )

#: where each name of ``__all__`` lives. They are imported on first use (PEP 562): every S4 job imports this package
#: on its way to one submodule, and importing all of them would load SciPy and ir-measures for jobs that use neither.
_HOMES = {
    "kendall_tau": "analysis",
    "tau_by_category": "analysis",
    "tau_by_depth": "analysis",
    "tau_reweighted": "analysis",
    "aggregate_metrics": "metrics",
    "evaluate_label_levels": "metrics",
    "ir_measures_per_question": "metrics",
    "weighted_micro": "metrics",
    "RANK_TYPES": "ranks",
    "AnswerIndex": "ranks",
    "discriminative_power": "stability",
    "stability_table": "stability",
    "subset_taus": "stability",
    "triple_subset_taus": "stability",
    "triple_units": "stability",
    "unit_values": "stability",
}


def __getattr__(name: str) -> Any:
    """The public name ``name`` from its submodule, imported now (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


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
