"""The compiled LinUCB loops against the formulas written out in plain float64 numpy."""

from __future__ import annotations

import numpy as np
import pytest

from rated.bandit import BIAS, DiscountedLinUCB
from rated.fusion import coefficients, fuse

D, N = 16, 40


class ReferenceLinUCB:
    """Diagonal discounted LinUCB exactly as the docstring of ``DiscountedLinUCB`` states it."""

    def __init__(self, prior: np.ndarray, alpha: float, gamma: float, lam: float) -> None:
        self.prior, self.alpha, self.gamma, self.lam = prior, alpha, gamma, lam
        self.A = np.full((prior.size, D + 1), lam)
        self.b = np.zeros((prior.size, D + 1))
        self.b[:, D] = lam * prior / BIAS

    @staticmethod
    def ctx(x: np.ndarray) -> np.ndarray:
        return np.append(x.astype(np.float64), 1.0) * BIAS

    def scores(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        c = self.ctx(x)
        theta = self.b[idx] / self.A[idx]
        return theta @ c + self.alpha * np.sqrt((c * c / self.A[idx]).sum(axis=1))

    def update(self, i: int, x: np.ndarray, r: float) -> None:
        c = self.ctx(x)
        self.A[i] = self.gamma * self.A[i] + (1 - self.gamma) * self.lam + c * c
        self.b[i] = self.gamma * self.b[i] + r * c


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, D)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def pair() -> tuple[DiscountedLinUCB, ReferenceLinUCB, np.random.Generator]:
    rng = np.random.default_rng(7)
    prior = rng.random(N)
    fast = DiscountedLinUCB(D, prior, alpha=0.3, gamma=0.9, lam=0.5)
    ref = ReferenceLinUCB(prior, alpha=0.3, gamma=0.9, lam=0.5)
    queries = _unit(rng, 30)
    for step in range(400):  # half the tools get feedback, some of them many times
        i, x, r = int(rng.integers(N // 2)), queries[step % 30], float(rng.random() < 0.6)
        fast.update(i, x, r)
        ref.update(i, x, r)
    return fast, ref, rng


def test_scores_and_state_follow_the_formulas(pair) -> None:
    fast, ref, rng = pair
    idx = np.arange(N)  # touched and cold tools together
    for x in _unit(rng, 5):
        np.testing.assert_allclose(fast.scores(idx, x), ref.scores(idx, x), rtol=1e-5, atol=1e-6)
    for i in (0, 3, N - 1):
        A, b = fast.state_of(i)
        np.testing.assert_allclose(A, ref.A[i], rtol=1e-5)
        np.testing.assert_allclose(b, ref.b[i], rtol=1e-5, atol=1e-6)


def test_fused_is_fuse_of_the_scores_and_picks_its_argmax(pair) -> None:
    fast, ref, rng = pair
    weights = (0.6, 0.3, 0.1)
    for x in _unit(rng, 20):
        idx = rng.choice(N, size=10, replace=False).astype(np.int64)
        sem = rng.uniform(-1, 1, size=10).astype(np.float32)
        final, best = fast.fused(idx, sem, x, weights)
        expected = fuse(sem, ref.scores(idx, x), fast.prior[idx], weights)
        np.testing.assert_allclose(final, expected, rtol=1e-5, atol=1e-6)
        assert final[best] == final.max() and best == int(np.argmax(final))
        unit, _ = fast.fused(idx, sem, x, coefficients(weights, "unit"))
        expected = fuse(sem, ref.scores(idx, x), fast.prior[idx], weights, semantic="unit")
        np.testing.assert_allclose(unit, expected, rtol=1e-5, atol=1e-6)


def test_ties_go_to_the_first_candidate() -> None:
    bandit = DiscountedLinUCB(D, np.full(4, 0.5))
    x = _unit(np.random.default_rng(0), 1)[0]
    final, best = bandit.fused(
        np.array([3, 1, 2], dtype=np.int64), np.zeros(3, np.float32), x, (0.75, 0.15, 0.1)
    )
    assert best == 0 and final[0] == final[1] == final[2]


def test_bad_candidates_raise_instead_of_reading_out_of_bounds() -> None:
    bandit = DiscountedLinUCB(D, np.full(4, 0.5))
    x = _unit(np.random.default_rng(0), 1)[0]
    w = (0.75, 0.15, 0.1)
    with pytest.raises(IndexError, match="bad candidates"):
        bandit.fused(np.array([0, 4], dtype=np.int64), np.zeros(2, np.float32), x, w)
    with pytest.raises(IndexError, match="bad candidates"):
        bandit.fused(np.array([0, 1], dtype=np.int64), np.zeros(1, np.float32), x, w)
    with pytest.raises(IndexError, match="out of range"):
        bandit.scores(np.array([-1]), x)
    with pytest.raises(ValueError, match="shape"):
        bandit.fused(np.array([0], dtype=np.int64), np.zeros(1, np.float32), np.ones(D + 1, np.float32), w)


def test_loaded_state_scores_as_the_original(pair) -> None:
    fast, _, rng = pair
    again = DiscountedLinUCB(D, fast.prior, alpha=0.3, gamma=0.9, lam=0.5)
    again.load_state_dict(fast.state_dict())
    idx, x = np.arange(N), _unit(rng, 1)[0]
    np.testing.assert_allclose(again.scores(idx, x), fast.scores(idx, x), rtol=1e-6)
    assert again.touched == fast.touched
