"""DiscountedLinUCB: the math on hand-computed cases (prior start, discounting, diagonal inverse)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rated.bandit import BIAS, DiscountedLinUCB

S = 1.0 / math.sqrt(2.0)


def unit(*v: float) -> np.ndarray:
    x = np.asarray(v, dtype=np.float64)
    return x / np.linalg.norm(x)


def test_context_appends_a_constant_and_keeps_unit_norm() -> None:
    bandit = DiscountedLinUCB(dim=3, prior=[0.5])
    ctx = bandit.context(unit(3.0, 0.0, 4.0))
    np.testing.assert_allclose(ctx, [0.6 * S, 0.0, 0.8 * S, S])
    assert np.linalg.norm(ctx) == pytest.approx(1.0)


def test_cold_start_score_is_the_prior_plus_the_bonus_for_any_query() -> None:
    prior = [0.9, 0.2, 0.55]
    bandit = DiscountedLinUCB(dim=4, prior=prior, alpha=0.1, lam=1.0)
    for x in (unit(1, 0, 0, 0), unit(1, -2, 3, 0.5), unit(0, 0, 0, -1)):
        # theta0 . x~ = prior exactly; bonus = alpha * sqrt(|x~|^2 / lam) = 0.1
        np.testing.assert_allclose(bandit.scores(np.array([0, 1, 2]), x), np.add(prior, 0.1))
    assert bandit.touched == []


def test_cold_start_state_makes_theta_reproduce_the_prior() -> None:
    bandit = DiscountedLinUCB(dim=2, prior=[0.7], lam=2.0)
    A, b = bandit.state_of(0)
    np.testing.assert_allclose(A, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(b, [0.0, 0.0, 2.0 * 0.7 / BIAS])
    theta = b / A
    x = unit(0.3, -0.9)
    assert theta @ bandit.context(x) == pytest.approx(0.7)


def test_one_update_matches_the_hand_computation() -> None:
    gamma, lam, alpha, prior = 0.95, 1.0, 0.1, 0.8
    bandit = DiscountedLinUCB(dim=2, prior=[prior], alpha=alpha, gamma=gamma, lam=lam)
    x = np.array([1.0, 0.0])  # x~ = (s, 0, s), x~^2 = (0.5, 0, 0.5)
    bandit.update(0, x, reward=0.0)
    A, b = bandit.state_of(0)
    # A <- gamma*A + (1-gamma)*lam + x~^2 = 1 + x~^2; the unseen coordinate stays exactly lam
    np.testing.assert_allclose(A, [1.5, 1.0, 1.5])
    # b <- gamma*b + 0*x~: only the prior entry, discounted
    np.testing.assert_allclose(b, [0.0, 0.0, gamma * prior / S])
    # score = theta.x~ + alpha*sqrt(sum x~^2/A) with theta = b/A (diagonal inverse)
    mean = (gamma * prior / S) / 1.5 * S
    bonus = alpha * math.sqrt(0.5 / 1.5 + 0.5 / 1.5)
    assert bandit.scores(np.array([0]), x)[0] == pytest.approx(mean + bonus)
    assert mean == pytest.approx(0.76 / 1.5)


def test_success_raises_and_failure_lowers_the_score() -> None:
    x = unit(0.2, 0.9, -0.4)
    good = DiscountedLinUCB(dim=3, prior=[0.5])
    bad = DiscountedLinUCB(dim=3, prior=[0.5])
    good.update(0, x, 1.0)
    bad.update(0, x, 0.0)
    start = 0.5 + 0.1
    assert good.scores(np.array([0]), x)[0] > start > bad.scores(np.array([0]), x)[0]


def test_repeated_updates_discount_old_evidence_geometrically() -> None:
    gamma, lam = 0.9, 1.0
    bandit = DiscountedLinUCB(dim=1, prior=[0.0], gamma=gamma, lam=lam)
    x = np.array([1.0])  # x~ = (s, s): both coordinates see 0.5 per update
    for _ in range(3):
        bandit.update(0, x, reward=1.0)
    A, b = bandit.state_of(0)
    # A_n = gamma^n*lam + (1-gamma^n)*lam + 0.5*(1 + gamma + gamma^2) = lam + 0.5*sum gamma^k
    np.testing.assert_allclose(A, [1 + 0.5 * (1 + gamma + gamma**2)] * 2)
    np.testing.assert_allclose(b, [S * (1 + gamma + gamma**2)] * 2)
    # then one failure: b is discounted and nothing is added
    bandit.update(0, x, reward=0.0)
    _, b2 = bandit.state_of(0)
    np.testing.assert_allclose(b2, gamma * b)


def test_regularizer_never_decays_below_lambda() -> None:
    bandit = DiscountedLinUCB(dim=3, prior=[0.5], gamma=0.5, lam=0.25)
    x = unit(1.0, 0.0, 0.0)
    for _ in range(50):
        bandit.update(0, x, reward=0.0)
    A, _ = bandit.state_of(0)
    assert A.min() >= 0.25
    assert A[1] == pytest.approx(0.25) and A[2] == pytest.approx(0.25)  # never-seen coordinates
    # the seen coordinate converges to the fixed point lam + 0.5 / (1 - gamma)
    assert A[0] == pytest.approx(0.25 + 0.5 / 0.5)


def test_a_failing_tool_falls_under_an_untouched_one_with_lower_prior() -> None:
    bandit = DiscountedLinUCB(dim=2, prior=[0.8, 0.6])
    x = unit(1.0, 1.0)
    failures = 0
    while bandit.scores(np.array([0, 1]), x)[0] >= bandit.scores(np.array([0, 1]), x)[1]:
        bandit.update(0, x, 0.0)
        failures += 1
        assert failures < 10
    # by hand: after one failure the mean is 0.95*0.8/1.5 = 0.507 and the bonus 0.1*sqrt(1/1.5)=0.082
    assert failures == 1


def test_only_the_chosen_tool_changes_and_state_is_sparse() -> None:
    bandit = DiscountedLinUCB(dim=4, prior=np.full(1_000, 0.5))
    x = unit(1, 2, 3, 4)
    before = bandit.scores(np.arange(1_000), x)
    bandit.update(7, x, 1.0)
    after = bandit.scores(np.arange(1_000), x)
    changed = np.flatnonzero(before != after)
    assert changed.tolist() == [7]
    assert bandit.touched == [7]


def test_state_dict_round_trip_restores_scores() -> None:
    rng = np.random.default_rng(0)
    bandit = DiscountedLinUCB(dim=5, prior=rng.random(20))
    for _ in range(30):
        bandit.update(int(rng.integers(20)), unit(*rng.normal(size=5)), float(rng.random() < 0.5))
    other = DiscountedLinUCB(dim=5, prior=bandit.prior)
    other.load_state_dict(bandit.state_dict())
    x = unit(*rng.normal(size=5))
    np.testing.assert_array_equal(other.scores(np.arange(20), x), bandit.scores(np.arange(20), x))


def test_add_arms_starts_cold() -> None:
    bandit = DiscountedLinUCB(dim=2, prior=[0.5])
    bandit.add_arms([0.3])
    assert bandit.n_arms == 2
    assert bandit.scores(np.array([1]), unit(1, 0))[0] == pytest.approx(0.4)


@pytest.mark.parametrize(
    "kwargs",
    [{"dim": 0}, {"alpha": -0.1}, {"gamma": 0.0}, {"gamma": 1.5}, {"lam": 0.0}, {"prior": [float("nan")]}],
)
def test_constructor_validates(kwargs: dict) -> None:
    args = {"dim": 2, "prior": [0.5], **kwargs}
    with pytest.raises(ValueError):
        DiscountedLinUCB(**args)


def test_bad_inputs_fail_clearly() -> None:
    bandit = DiscountedLinUCB(dim=2, prior=[0.5])
    with pytest.raises(ValueError, match="shape"):
        bandit.scores(np.array([0]), np.ones(3))
    with pytest.raises(IndexError):
        bandit.update(1, unit(1, 0), 1.0)
