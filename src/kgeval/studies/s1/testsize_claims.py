"""S1's Fig. 1 claims (Berrendorf et al., paper 000, Sec. 4) judged on the test-size sweeps.

Each sweep (:class:`kgeval.studies.s1.testsize_replicates.SweepReplicates`, one per EA pair and number of training
alignments k) holds the seed-mean MR, Hits@1, AMR and AMRI at every test size t with joint bootstrap replicates. The
paper's sentences (Sec. 4) and how each is decided, fixed before the data are looked at:

- ``s1.fig1_mr_grows_with_test_size`` ("the MR increases ... with increasing test size"): the relative change of the
  least-squares line of MR over all test sizes (:func:`kgeval.studies.s1.testsize_fits.fitted_change`) > 0, every k;
- ``s1.fig1_mr_grows_almost_linearly`` ("almost linearly"): R^2 of that line >= :data:`LINEAR_R2`, every k with
  three or more sizes (the paper gives no number: 0.99 is kgeval's reading of "almost");
- ``s1.fig1_hits1_falls_with_test_size`` ("a similar effect for the Hits@1 score"): its fitted change < 0, every k > 0
  (with none, Hits@1 is a random scorer's 1/t);
- ``s1.fig1_amr_stable_with_test_size`` ("AMR ... almost completely insensitive to the size of the test set"): the
  fitted change of AMR within +-:data:`AMR_TOLERANCE` and smaller in magnitude than MR's, every k (the tolerance is
  kgeval's: the paper gives none). AMR = f + (1 - f)(1 - AMRI) with its floor f = 2/(t+1) (a perfect aligner's AMR),
  which falls with t; the reason states f's share of AMR at the smallest and the largest size;
- ``s1.fig1_amr_floor_removed_stable`` (kgeval's own reading): the same criterion on 1 - AMRI = (MR - 1)/(E[MR] - 1),
  which has no floor: a query whose true entity beats a share p of the pool's other candidates has expected rank
  1 + (t - 1) p on a random test subset of size t, so E[1 - AMRI] = 2 p whatever t, while E[AMR] moves with f;
- ``s1.fig1_few_alignments_like_random`` ("models trained with less than 10 alignments perform similarly to the random
  model, as their AMR score is nearly one"): |AMR - 1| <= :data:`RANDOM_TOLERANCE` at each such k's largest test set;
- ``s1.fig1_amr_orders_training_sizes`` ("GCN-Align takes advantage of more training alignments since the models have
  different AMR scores"): at the largest test size every k shares (the same test mappings per seed,
  :mod:`kgeval.studies.s1.splits`), AMR falls strictly from each k to the next larger one; every paired difference's
  interval lies below 0.

The basis is ``measured`` only for the paper's setting (DBP15k zh-en, GCN-Align at 200 dims, 50 negatives, 2,000
epochs, five splits); otherwise ``stand-in`` naming what differs (:func:`sweep_basis`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kgeval.claims import NOT_CHECKABLE, Claim, Criterion, Judgement, MEASURED, combine, format_interval
from kgeval.claims import interval_claim, judge, stand_in
from kgeval.studies.s1.testsize_fits import fitted_change, r_squared
from kgeval.studies.s1.testsize_replicates import UNIT, SweepReplicates
from kgeval.uncertainty.resampling import percentile_interval

__all__ = [
    "AMR_TOLERANCE", "LINEAR_R2", "RANDOM_TOLERANCE", "PAPER_SETUP", "sweep_basis", "sweep_claims"
]

#: the largest relative change of AMR over the swept test sizes that counts as "almost completely insensitive"
AMR_TOLERANCE = 0.10
#: the smallest R^2 of MR's line that counts as "almost linearly"
LINEAR_R2 = 0.99
#: the largest |AMR - 1| that counts as "nearly one"
RANDOM_TOLERANCE = 0.10
#: "less than 10 alignments"
FEW_ALIGNMENTS = 10
#: paper 000's Fig. 1 setting (the authors' script: GCN-Align at 200 dims, 50 negatives, 2,000 epochs, five splits)
PAPER_SETUP: dict[str, Any] = {
    "dataset": {"source": "dbp15k", "subset": "zh_en"},
    "model": {"embedding_dim": 200, "num_negatives": 50, "num_epochs": 2000},
    "seeds": 5,
}

_UNIT = f"95 % two-stage bootstrap over {UNIT}"
Statistic = Callable[[np.ndarray, Mapping[str, np.ndarray]], np.ndarray]


def sweep_basis(datasets: Mapping[str, Mapping[str, Any]], model: Mapping[str, Any], seeds: int) -> str:
    """``measured`` for the paper's setting, else ``stand-in: ...`` naming each difference from it."""
    differs = []
    paper = PAPER_SETUP
    for key, spec in sorted(datasets.items()):
        if {k: spec.get(k) for k in paper["dataset"]} != paper["dataset"]:
            differs.append(f"EA pair {key} (paper: DBP15k zh-en)")
    for key, value in paper["model"].items():
        if model.get(key) != value:
            differs.append(f"{key} {model.get(key)} (paper: {value})")
    if seeds < paper["seeds"]:
        differs.append(f"{seeds} split seeds (paper: {paper['seeds']})")
    return stand_in("GCN-Align sweep with " + ", ".join(differs)) if differs else MEASURED


def _judged(
    sweeps: Mapping[tuple[str, int], SweepReplicates],
    statistic: Statistic,
    criterion: Criterion,
    name: str,
    level: float,
) -> tuple[list[Judgement], list[float], str]:
    """Per sweep: the judgement of ``statistic``, its point value, and the intervals as text."""
    parts, points, texts = [], [], []
    for (pair, k), sweep in sorted(sweeps.items()):
        point = float(statistic(sweep.sizes, sweep.points))
        low, high = percentile_interval(statistic(sweep.sizes, sweep.replicates), level)
        parts.append(judge(point, low, high, criterion, name=f"{name} at {pair}/{k}"))
        points.append(point)
        texts.append(f"{pair}/{k} {format_interval(low, high, digits=3)}")
    return parts, points, "; ".join(texts) + f" ({_UNIT})"


def _change(metric: str, transform: Callable[[np.ndarray], np.ndarray] = lambda v: v) -> Statistic:
    return lambda sizes, values: fitted_change(sizes, transform(values[metric]))


def _summary(points: Sequence[float], sweeps: Mapping, what: str) -> str:
    values = np.asarray(points, dtype=float)
    keys = ", ".join(f"{p}/{k}" for p, k in sorted(sweeps))
    return f"{what}: min {values.min():+.4f}, median {np.median(values):+.4f}, max {values.max():+.4f} over {keys}"


def _missing(ids: tuple[str, str, str], what: str) -> Claim:
    return Claim(*ids, "", "", NOT_CHECKABLE, f"no test-size sweep with {what} in this tier")


def _select(sweeps: Mapping[tuple[str, int], SweepReplicates], sizes: int = 2, trained: bool | None = None):
    return {
        key: s for key, s in sweeps.items()
        if len(s.sizes) >= sizes and (trained is None or (key[1] > 0) == trained)
    }


def _direction(sweeps, metric: str, sign: int, ids, level: float, basis: str) -> Claim:
    chosen = _select(sweeps, trained=True if metric == "hits@1" else None)
    if not chosen:
        return _missing(ids, "two or more test sizes" + (" and training alignments" if metric == "hits@1" else ""))
    criterion = Criterion(lower=0.0, strict=True) if sign > 0 else Criterion(upper=0.0, strict=True)
    parts, points, interval = _judged(chosen, _change(metric), criterion, f"{metric}'s fitted change", level)
    return interval_claim(
        *ids, _summary(points, chosen, f"relative change of {metric}'s least-squares line over the test sizes"),
        combine(parts), interval=interval, tolerance="sign of the fitted relative change, every training size",
        basis=basis,
    )


def _linear(sweeps, level: float, basis: str) -> Claim:
    ids = ("s1.fig1_mr_grows_almost_linearly", "Sec. 4: MR increases almost linearly with increasing test size",
           "almost linearly (no number)")
    chosen = _select(sweeps, sizes=3)
    if not chosen:
        return _missing(ids, "three or more test sizes")
    statistic = lambda sizes, values: r_squared(sizes, values["mr"])  # noqa: E731
    parts, points, interval = _judged(chosen, statistic, Criterion(lower=LINEAR_R2), "MR's R^2", level)
    return interval_claim(
        *ids, _summary(points, chosen, "R^2 of MR's least-squares line against the test size"), combine(parts),
        interval=interval, tolerance=f"R^2 >= {LINEAR_R2} (kgeval's reading of 'almost'), every training size",
        basis=basis,
    )


def _stable(sweeps, level: float, basis: str, floor_removed: bool) -> Claim:
    if floor_removed:
        ids = ("s1.fig1_amr_floor_removed_stable",
               "kgeval's reading of Sec. 4: AMR without its floor 2/(t+1), 1 - AMRI = (MR - 1)/(E[MR] - 1), does not "
               "depend on the test size", "AMR constant in the test size (its floor not discussed)")
        statistic = _change("amri", lambda v: 1.0 - v)
        name = "(1 - AMRI)'s fitted change"
    else:
        ids = ("s1.fig1_amr_stable_with_test_size",
               "Sec. 4, Fig. 1: AMR is almost completely insensitive to the size of the test set (MR is not)",
               "AMR constant in the test size for every training size")
        statistic, name = _change("amr"), "AMR's fitted change"
    chosen = _select(sweeps)
    if not chosen:
        return _missing(ids, "two or more test sizes")
    bound = Criterion(lower=-AMR_TOLERANCE, upper=AMR_TOLERANCE)
    parts, points, interval = _judged(chosen, statistic, bound, name, level)
    gap = lambda sizes, v: np.abs(fitted_change(sizes, v["mr"])) - np.abs(statistic(sizes, v))  # noqa: E731
    parts += _judged(chosen, gap, Criterion(lower=0.0, strict=True), "|MR's change| - |this change|", level)[0]
    floors = "; ".join(
        f"{p}/{k} {2 / (s.sizes[0] + 1) / s.points['amr'][0]:.1%} at t={s.sizes[0]}, "
        f"{2 / (s.sizes[-1] + 1) / s.points['amr'][-1]:.1%} at t={s.sizes[-1]}" for (p, k), s in sorted(chosen.items())
    )
    remark = "" if floor_removed else (
        "AMR = f + (1 - f)(1 - AMRI) with its floor f = 2/(t+1), which falls with t; f's share of AMR: " + floors
    )
    return interval_claim(
        *ids, _summary(points, chosen, f"relative change of {'1 - AMRI' if floor_removed else 'AMR'}'s fitted line"),
        combine(parts), interval=interval,
        tolerance=f"|fitted relative change| <= {AMR_TOLERANCE} (kgeval's: the paper gives no number) and smaller "
        "than MR's, every training size", basis=basis, reason=remark,
    )


def _like_random(sweeps, level: float, basis: str) -> Claim:
    ids = ("s1.fig1_few_alignments_like_random",
           "Sec. 4: models trained with less than 10 alignments perform similarly to the random model (AMR nearly 1)",
           "AMR nearly 1 below 10 training alignments")
    chosen = {key: s for key, s in sweeps.items() if key[1] < FEW_ALIGNMENTS}
    if not chosen:
        return _missing(ids, f"fewer than {FEW_ALIGNMENTS} training alignments")
    at_largest = lambda sizes, values: values["amr"][..., -1]  # noqa: E731
    bound = Criterion(lower=1 - RANDOM_TOLERANCE, upper=1 + RANDOM_TOLERANCE)
    parts, points, interval = _judged(chosen, at_largest, bound, "AMR at the largest test set", level)
    return interval_claim(
        *ids, _summary(points, chosen, "AMR at each sweep's largest test set"), combine(parts), interval=interval,
        tolerance=f"|AMR - 1| <= {RANDOM_TOLERANCE} (kgeval's reading of 'nearly one')", basis=basis,
    )


def _ordering(sweeps, level: float, basis: str) -> Claim:
    ids = ("s1.fig1_amr_orders_training_sizes",
           "Sec. 4: GCN-Align takes advantage of more training alignments, since the models have different AMR scores",
           "AMR falls with the number of training alignments")
    parts, texts, values = [], [], []
    for pair in sorted({p for p, _ in sweeps}):
        runs = sorted((k, s) for (p, k), s in sweeps.items() if p == pair)
        common = set.intersection(*(set(s.sizes.tolist()) for _, s in runs))
        if len(runs) < 2 or not common:
            continue
        t = max(common)
        at = [(k, s.points["amr"][s.sizes == t][0], s.replicates["amr"][:, s.sizes == t][:, 0]) for k, s in runs]
        values.append(f"{pair} at t={t}: " + ", ".join(f"k={k} {v:.4f}" for k, v, _ in at))
        for (k1, v1, r1), (k2, v2, r2) in zip(at, at[1:]):
            low, high = percentile_interval(r2 - r1, level)
            name = f"AMR(k={k2}) - AMR(k={k1}) at {pair}/t={t}"
            parts.append(judge(v2 - v1, low, high, Criterion(upper=0.0, strict=True), name=name))
            texts.append(f"{k1}->{k2} {format_interval(low, high, digits=4)}")
    if not parts:
        return _missing(ids, "two training sizes sharing a test size")
    return interval_claim(
        *ids, "; ".join(values), combine(parts), interval="; ".join(texts) + f" (paired, {_UNIT})",
        tolerance="every step to the next larger training size lowers AMR (difference < 0)", basis=basis,
    )


def sweep_claims(sweeps: Mapping[tuple[str, int], SweepReplicates], level: float, basis: str) -> list[Claim]:
    """The Fig. 1 claims (module docstring) on the sweeps ((pair, #train) -> sweep)."""
    return [
        _direction(sweeps, "mr", +1, ("s1.fig1_mr_grows_with_test_size",
                   "Sec. 4, Fig. 1: MR grows with the number of test alignments", "MR grows with the test size"),
                   level, basis),
        _direction(sweeps, "hits@1", -1, ("s1.fig1_hits1_falls_with_test_size",
                   "Sec. 4, Fig. 1: Hits@1 falls with the number of test alignments (trained models)",
                   "Hits@1 falls with the test size"), level, basis),
        _linear(sweeps, level, basis),
        _stable(sweeps, level, basis, floor_removed=False),
        _stable(sweeps, level, basis, floor_removed=True),
        _like_random(sweeps, level, basis),
        _ordering(sweeps, level, basis),
    ]
