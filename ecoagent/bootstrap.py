"""Percentile bootstrap intervals with resampling inside strata: one implementation for the stages'
"how loose is this number" figures (Real's calibrated threshold, Syn's median yield)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def stratified_interval(
    strata: Sequence[Any],
    statistic: Callable[[np.ndarray], float],
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.9,
) -> tuple[float, float, np.ndarray]:
    """The ``level`` percentile interval of ``statistic`` over bootstrap resamples.

    Each resample draws, with replacement, as many items from each stratum as the stratum holds, so the
    design of the sample (platforms of a stratified tool sample, classes of a labelled set) is kept.
    ``statistic`` receives the resampled item indices (into ``strata``). Returns the interval's ends and
    the resampled statistics.
    """
    labels = np.asarray(strata)
    if not labels.size:
        raise ValueError("nothing to resample")
    groups = [np.flatnonzero(labels == s) for s in np.unique(labels)]
    rng = np.random.default_rng(seed)
    found = np.empty(n_boot)
    for b in range(n_boot):
        found[b] = statistic(np.concatenate([rng.choice(g, g.size) for g in groups]))
    alpha = (1.0 - level) / 2
    return float(np.quantile(found, alpha)), float(np.quantile(found, 1 - alpha)), found
