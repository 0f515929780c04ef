"""GlobalMAB: the context-free ablation's statistic, by hand, and its parity with LinUCB's cold start."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rated.bandit import DiscountedLinUCB
from rated.global_mab import GlobalMAB


def test_cold_start_equals_linucb_cold_start() -> None:
    prior = [0.1, 0.7, 0.95]
    x = np.array([0.6, 0.8])
    mab = GlobalMAB(dim=2, prior=prior)
    lin = DiscountedLinUCB(dim=2, prior=prior)
    np.testing.assert_allclose(mab.scores(np.arange(3), x), lin.scores(np.arange(3), x))


def test_discounted_mean_by_hand() -> None:
    gamma, lam, alpha = 0.9, 2.0, 0.1
    mab = GlobalMAB(dim=3, prior=[0.5], alpha=alpha, gamma=gamma, lam=lam)
    x = np.zeros(3)
    mab.update(0, x, 1.0)
    mab.update(0, x, 0.0)
    n, s = mab.state_of(0)
    n1, s1 = gamma * lam + (1 - gamma) * lam + 1, gamma * lam * 0.5 + 1
    assert (n, s) == pytest.approx((gamma * n1 + (1 - gamma) * lam + 1, gamma * s1))
    assert mab.scores(np.array([0]), x)[0] == pytest.approx(s / n + alpha / math.sqrt(n))


def test_ignores_the_query() -> None:
    mab = GlobalMAB(dim=2, prior=[0.5, 0.5])
    mab.update(0, np.array([1.0, 0.0]), 0.0)
    a = mab.scores(np.array([0, 1]), np.array([1.0, 0.0]))
    b = mab.scores(np.array([0, 1]), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(a, b)
    assert a[0] < a[1]


def test_state_round_trip() -> None:
    mab = GlobalMAB(dim=2, prior=[0.2, 0.4, 0.6])
    for i, r in ((0, 1.0), (2, 0.0), (0, 0.0)):
        mab.update(i, np.zeros(2), r)
    other = GlobalMAB(dim=2, prior=mab.prior)
    other.load_state_dict(mab.state_dict())
    np.testing.assert_array_equal(
        other.scores(np.arange(3), np.zeros(2)), mab.scores(np.arange(3), np.zeros(2))
    )
    with pytest.raises(ValueError, match="linucb"):
        DiscountedLinUCB(dim=2, prior=mab.prior).load_state_dict(mab.state_dict())


@pytest.mark.parametrize("kwargs", [{"gamma": 0.0}, {"lam": -1.0}, {"alpha": float("inf")}, {"dim": 0}])
def test_constructor_validates(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        GlobalMAB(**{"dim": 2, "prior": [0.5], **kwargs})
