"""Stratified percentile bootstrap: strata keep their sizes in every resample."""

from __future__ import annotations

import numpy as np
import pytest

from ecoagent.bootstrap import stratified_interval


def test_each_resample_keeps_the_strata_sizes() -> None:
    strata = ["a"] * 3 + ["b"] * 7
    seen: list[tuple[int, int]] = []

    def count(idx: np.ndarray) -> float:
        seen.append((int((idx < 3).sum()), int((idx >= 3).sum())))
        return float(idx.size)

    low, high, found = stratified_interval(strata, count, n_boot=50)
    assert set(seen) == {(3, 7)} and (low, high) == (10.0, 10.0) and found.shape == (50,)


def test_interval_of_a_mean_covers_it_and_narrows_with_more_items() -> None:
    rng = np.random.default_rng(3)
    small, large = rng.normal(size=20), rng.normal(size=2000)
    lo_s, hi_s, _ = stratified_interval([0] * small.size, lambda i: float(small[i].mean()), n_boot=400)
    lo_l, hi_l, _ = stratified_interval([0] * large.size, lambda i: float(large[i].mean()), n_boot=400)
    assert lo_s < small.mean() < hi_s and lo_l < large.mean() < hi_l
    # the standard error shrinks by sqrt(100) = 10: the interval by about as much
    assert 5 < (hi_s - lo_s) / (hi_l - lo_l) < 20
    with pytest.raises(ValueError, match="nothing"):
        stratified_interval([], lambda i: 0.0)
