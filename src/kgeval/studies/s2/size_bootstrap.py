"""Bootstrap intervals of S2's size correlations (Sec. 4.3, Fig. 1): Spearman's rho of a metric against #entities.

Dataset size is a property of the dataset, and the models of one dataset share its test set and its size: they are
not independent points of the correlation. The independent unit is the *dataset* (docs/reproducing.md, "Intervals
and verdicts"): a resample draws the datasets with replacement and recomputes rho over all model x dataset points of
the drawn datasets (a dataset drawn twice contributes its points twice). A resample that draws a single distinct
dataset has one size only, so rho is undefined there; it is dropped and counted (:attr:`RhoInterval.dropped`).

The bootstrap over the model x dataset points, the naive one, is computed beside it for comparison; it treats the
points as independent and gives a narrower interval, which is why the claims are judged on the datasets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import percentile_interval, resample_indices

__all__ = ["RhoInterval", "spearman", "rho_over_datasets", "rho_over_points"]

#: the columns of a grid that the size correlation reads
SIZE, DATASET = "num_entities", "dataset"


@dataclass(frozen=True)
class RhoInterval:
    """rho on all points with its percentile interval over ``units`` resampled.

    :ivar point: rho on the data as they are
    :ivar low: the lower bound of the interval
    :ivar high: the upper bound
    :ivar resamples: the resamples drawn
    :ivar dropped: the resamples where rho is undefined (one distinct dataset, or a constant metric), left out
    :ivar units: what was resampled, e.g. ``4 datasets``
    """

    point: float
    low: float
    high: float
    resamples: int
    dropped: int
    units: str

    def unit(self) -> str:
        """The resampling unit for the ``interval`` column."""
        text = f"bootstrap over {self.units}, {self.resamples:,} resamples"
        if self.dropped:
            text += f"; {self.dropped} undefined (a single distinct dataset or a constant metric), dropped"
        return text


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (SciPy), NaN when either variable is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)


def _interval(point: float, replicates: np.ndarray, resamples: int, level: float, units: str) -> RhoInterval:
    low, high = percentile_interval(replicates, level)
    return RhoInterval(point, low, high, resamples, int(np.isnan(replicates).sum()), units)


def rho_over_datasets(frame: pd.DataFrame, column: str, settings: BootstrapSettings) -> RhoInterval:
    """rho(``column``, #entities) over all rows of ``frame``, with its bootstrap interval over the datasets.

    :param frame: one row per model x dataset point: ``dataset``, ``num_entities`` and ``column``
    """
    names = sorted(set(frame[DATASET]))
    blocks = [frame.loc[frame[DATASET] == name, [SIZE, column]].to_numpy(dtype=float) for name in names]
    replicates = []
    for chunk in resample_indices(len(names), settings.resamples, settings.seed):
        for row in chunk:
            if len(set(row.tolist())) < 2:
                replicates.append(np.nan)
                continue
            drawn = np.concatenate([blocks[i] for i in row])
            replicates.append(spearman(drawn[:, 0], drawn[:, 1]))
    point = spearman(frame[SIZE].to_numpy(float), frame[column].to_numpy(float))
    return _interval(point, np.array(replicates), settings.resamples, settings.level, f"{len(names)} datasets")


def rho_over_points(frame: pd.DataFrame, column: str, settings: BootstrapSettings) -> RhoInterval:
    """The same rho with the naive bootstrap over the model x dataset points (shown beside, not judged)."""
    values = frame[[SIZE, column]].to_numpy(dtype=float)
    replicates = [
        spearman(values[row, 0], values[row, 1])
        for chunk in resample_indices(len(values), settings.resamples, settings.seed)
        for row in chunk
    ]
    point = spearman(values[:, 0], values[:, 1])
    return _interval(point, np.array(replicates), settings.resamples, settings.level, f"{len(values)} points")
