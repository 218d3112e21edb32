"""S5's timing in parts (paper 004, Sec. 6.3, Table 1): the phases of the alternative protocol, ``t_A`` in
its two readings, ``%Delta t``, and the noise floor below which a run's timing says nothing.

Phases of one run (:func:`kgeval.studies.s5.assessment.run_s5`), each measured apart:

- ``t_score``: scoring the fitted validation positives and all their LCWA negatives (with forming the negatives:
  the filter index, each batch's corruptions and their selection);
- ``t_stats``: the statistics pass over those scores (:class:`~kgeval.studies.s5.statistics.CalibrationData`:
  the sorted distinct scores with their weights, the Platt histogram). Scoring and the statistics pass are one
  streamed loop; :class:`PhaseTimer` splits each batch's time between them with contiguous checkpoints, so that
  ``t_score + t_stats`` is the loop's wall time;
- ``t_fit_selected``: the fit of the selected function (``t_fit_all``: every candidate and the selection);
- ``t_posteriors``: scoring the test positives and their posteriors.

Readings of ``t_A`` (:func:`timing_summary`):

- ``t_a = t_stats + t_fit_selected + t_posteriors``, the paper's (Sec. 6.3: "the time taken to learn f over G_VA
  plus the time taken to compute posterior probabilities over G_TE"; Sec. 3: "batches of scores can be provided to
  compute the calibration function", so the paper streams the validation step's scores into the fit, and that
  pass is part of learning ``f``; the scores themselves come from the training loop's validation step);
- ``t_a_end_to_end = t_score + t_a``: plus the scoring that learning ``f`` needs when no validation step kept them;
- ``t_a_all_fits = t_stats + t_fit_all + t_posteriors``: every candidate fit and the selection (an extension).

``%Delta t = 100 (t_A - t_LP) / t_LP`` for each (:func:`pct_delta_t`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

__all__ = ["MIN_T_LP", "MIN_RESOLUTIONS", "MIN_MEASURED_SHARE", "pct_delta_t", "PhaseTimer", "timing_summary", "timer_resolution",
           "noise_floor"]

#: the shortest ``t_LP`` (seconds) a timing claim uses; shorter runs are excluded as noise
MIN_T_LP = 0.1
#: the shortest ``t_LP`` in timer resolutions (``time.get_clock_info("perf_counter").resolution``)
MIN_RESOLUTIONS = 100
#: the least share of runs above the noise floor for a timing claim "in every run": fewer leave a subset chosen by
#: speed (the slowest scorers), not the runs the claim is about
MIN_MEASURED_SHARE = 0.5


#: timings passed through to the summary when measured
_CHECKS = ("t_validation_pass",)


def pct_delta_t(t_a: float, t_lp: float) -> float:
    """Sec. 6.3's time change of the alternative protocol against rank evaluation, ``100 (t_A - t_LP) / t_LP`` (%).

    Negative when the alternative is faster, as the paper's Table 1 prints it (its formula prints the sign flipped).
    """
    return 100.0 * (t_a - t_lp) / t_lp


def timer_resolution() -> float:
    """The resolution of ``time.perf_counter`` on this machine (seconds)."""
    return float(time.get_clock_info("perf_counter").resolution)


def noise_floor(resolution: float) -> float:
    """The shortest ``t_LP`` a timing claim uses: :data:`MIN_T_LP`, or :data:`MIN_RESOLUTIONS` resolutions if longer."""
    return max(MIN_T_LP, MIN_RESOLUTIONS * float(resolution))


class PhaseTimer:
    """Accumulates the wall time of alternating phases with contiguous checkpoints: each :meth:`lap` charges the
    time since the previous checkpoint to one phase, so the phases add up to the time since :meth:`start`.

    :param sync: waits for the device's queued work before each checkpoint (a no-op on CPU)
    """

    def __init__(self, sync: Callable[[], None] | None = None) -> None:
        self.sync = sync
        self.times: dict[str, float] = {}
        self._mark = time.perf_counter()

    def start(self) -> None:
        """Set the checkpoint to now (time before it is charged to no phase)."""
        self._mark = time.perf_counter()

    def lap(self, phase: str) -> None:
        """Charge the time since the last checkpoint to ``phase`` and set the checkpoint to now."""
        if self.sync is not None:
            self.sync()
        now = time.perf_counter()
        self.times[phase] = self.times.get(phase, 0.0) + (now - self._mark)
        self._mark = now


def timing_summary(times: Mapping[str, float]) -> dict[str, float]:
    """The timings of one run with the three readings of ``t_A`` and their ``%Delta t`` (module docstring).

    :param times: ``t_lp``, ``t_score``, ``t_stats``, ``t_fit_all``, ``t_fit_isotonic``, ``t_fit_platt``,
        ``t_fit_selected``, ``t_select``, ``t_posteriors``, any ``t_fit_platt_<procedure>`` and, if measured,
        ``t_validation_pass`` (the wall time of scoring and the statistics pass together, a check of their split)
    """
    t_lp, t_stats, t_posteriors = times["t_lp"], times["t_stats"], times["t_posteriors"]
    t_a = t_stats + times["t_fit_selected"] + t_posteriors
    t_a_end_to_end = times["t_score"] + t_a
    t_a_all_fits = t_stats + times["t_fit_all"] + t_posteriors
    keys = ("t_lp", "t_score", "t_stats", "t_fit_all", "t_fit_isotonic", "t_fit_platt", "t_fit_selected", "t_select")
    return {
        **{key: times[key] for key in (*keys, "t_posteriors")},
        **{key: value for key, value in times.items() if key.startswith("t_fit_platt_") or key in _CHECKS},
        "t_a": t_a,
        "t_a_end_to_end": t_a_end_to_end,
        "t_a_all_fits": t_a_all_fits,
        "pct_delta_t": pct_delta_t(t_a, t_lp),
        "pct_delta_t_end_to_end": pct_delta_t(t_a_end_to_end, t_lp),
        "pct_delta_t_all_fits": pct_delta_t(t_a_all_fits, t_lp),
        "timer_resolution": timer_resolution(),
    }
