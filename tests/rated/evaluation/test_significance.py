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


def test_small_n_is_enumerated_exactly() -> None:
    # 5 queries all better by 1: only the all-plus and all-minus assignments reach |mean| = 1 -> 2/32
    a, b = np.ones(5), np.zeros(5)
    assert paired_randomization_p(a, b, n_resamples=10) == 2 / 32
    assert compare(a, b, 10).exact and not compare(np.ones(21), np.zeros(21), 10).exact
    # one query of five worse: |mean| >= 0.6 needs at most one minus among the +1 ... (6 of 32 each side)
    d = np.array([1.0, 1.0, 1.0, 1.0, -1.0])
    assert paired_randomization_p(d, np.zeros(5)) == 12 / 32
