"""The summary table of one S5 run (paper 004, Sec. 6.3, Table 1): timings, ``MR``, sizes, and the cost per unit
of work of the two protocols it times.

``summary.tsv`` is a long ``metric, value`` table: the timings and readings of ``t_A`` of
:func:`kgeval.studies.s5.timing.timing_summary`, the test ``MR``, the sizes of :func:`run_counts`, and the cost per
unit of work (:func:`unit_costs`), which sets the two protocols side by side at the same implementation quality:

- ``ns_per_valid_negative``: ``t_stats`` per validation negative, the statistics pass (each negative placed among
  the sorted positive scores and binned, :mod:`kgeval.studies.s5.statistics`);
- ``ns_per_valid_negative_end_to_end``: ``t_score + t_stats`` per validation negative (scoring included);
- ``ns_per_lp_candidate``: ``t_LP`` per candidate of the rank evaluation, every entity of each test triple's head
  and tail query (``2 * num_test * num_entities``), scoring, filtering and counting included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from kgeval.studies.s5.timing import timing_summary

if TYPE_CHECKING:
    from kgeval.lp.datasets import LPData
    from kgeval.studies.s5.negatives import NegativeSet
    from kgeval.studies.s5.statistics import CalibrationData

__all__ = ["UNIT_COSTS", "run_counts", "unit_costs", "summary_table"]

#: the cost-per-unit rows of the summary (module docstring)
UNIT_COSTS: tuple[str, ...] = ("ns_per_valid_negative", "ns_per_valid_negative_end_to_end", "ns_per_lp_candidate")


def run_counts(
    data: LPData,
    num_valid: int,
    num_test: int,
    data_valid: CalibrationData,
    test_negatives: NegativeSet,
    strategies: Sequence[str],
    batch_size: int,
) -> dict[str, float]:
    """The sizes in the summary of one model: graph, splits, negatives of every strategy, batch, histogram bin."""
    return {
        "num_entities": data.num_entities,
        "num_relations": data.num_relations,
        "num_valid": num_valid,
        "num_test": num_test,
        "num_valid_negatives": data_valid.num_negatives,
        "num_test_negatives_lcwa": test_negatives.count("lcwa"),
        # per assessed strategy, so that an empty strategy (GB on Nations and Kinships) is visible in every table
        **{
            f"num_test_negatives_{strategy}": test_negatives.count(strategy)
            for strategy in strategies
            if strategy != "lcwa"
        },
        "queries_per_batch": batch_size,
        "platt_histogram_bin_width": data_valid.histogram.width or 0.0,
    }


def unit_costs(times: Mapping[str, float], counts: Mapping[str, float]) -> dict[str, float]:
    """Nanoseconds per validation negative and per rank-evaluation candidate (module docstring); NaN where the
    count is zero.

    :param times: ``t_lp``, ``t_score``, ``t_stats`` (seconds)
    :param counts: ``num_valid_negatives``, ``num_test``, ``num_entities`` (:func:`run_counts`)
    """
    negatives = float(counts["num_valid_negatives"])
    candidates = 2.0 * float(counts["num_test"]) * float(counts["num_entities"])

    def per(seconds: float, units: float) -> float:
        return 1e9 * seconds / units if units > 0 else float("nan")

    return {
        "ns_per_valid_negative": per(times["t_stats"], negatives),
        "ns_per_valid_negative_end_to_end": per(times["t_score"] + times["t_stats"], negatives),
        "ns_per_lp_candidate": per(times["t_lp"], candidates),
    }


def summary_table(times: Mapping[str, float], counts: Mapping[str, float], mr: float) -> pd.DataFrame:
    """The long ``metric, value`` table of one model: timings with ``t_A`` and ``%Delta t``, ``MR``, counts and the
    cost per unit of work."""
    summary = {**timing_summary(times), "mr": mr, **counts, **unit_costs(times, counts)}
    return pd.DataFrame({"metric": list(summary), "value": [float(v) for v in summary.values()]})
