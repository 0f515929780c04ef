"""Paired tests: no difference gives p = 1, a consistent difference a small p, and seeds reproduce."""

from __future__ import annotations

import numpy as np

from rated.evaluation.significance import compare, paired_bootstrap, paired_randomization_p


def test_identical_scores_are_not_significant() -> None:
    a = np.array([1.0, 0.5, 0.0, 0.25])
    assert paired_randomization_p(a, a, 200) == 1.0
    assert paired_bootstrap(a, a, 200)[0] == 1.0


def test_consistent_difference_is_significant() -> None:
    rng = np.random.default_rng(0)
    b = rng.random(200)
    a = b + 0.2
    assert paired_randomization_p(a, b, 2000) < 0.01
    p, lo, hi = paired_bootstrap(a, b, 2000)
    assert p < 0.01 and lo > 0.19 and hi < 0.21


def test_same_seed_same_numbers() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(50), rng.random(50)
    assert compare(a, b, 500, seed=3) == compare(a, b, 500, seed=3)
