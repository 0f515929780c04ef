"""Paired significance tests between two retrievers on the same queries (Table 1's p-values).

Both tests work on per-query scores (reciprocal ranks), pairing each query's score under method A
with its score under method B, as IR evaluation does (Smucker et al., CIKM 2007): the paired
randomization test flips the sign of each query's difference; the bootstrap resamples queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_CHUNK = 500


@dataclass(frozen=True)
class PairedTest:
    """Outcome of a paired comparison of A against B (positive ``mean_diff`` = A is better)."""

    mean_diff: float
    p_randomization: float
    p_bootstrap: float
    ci_low: float
    ci_high: float
    n_queries: int
    n_resamples: int
    seed: int
    exact: bool = False

    def to_dict(self) -> dict[str, float | int]:
        return dict(self.__dict__)


EXACT_MAX_N = 20  # 2^20 sign assignments: enumerated exactly up to here


def exact_randomization_p(d: np.ndarray) -> float:
    """Two-sided p of the mean paired difference over all 2^n sign flips (n <= ``EXACT_MAX_N``)."""
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n > EXACT_MAX_N:
        raise ValueError(f"exact enumeration is for n <= {EXACT_MAX_N}, got {n}")
    observed = abs(d.mean())
    codes = np.arange(2**n, dtype=np.int64)[:, None]
    signs = ((codes >> np.arange(n)) & 1) * 2.0 - 1.0  # every assignment once, the observed included
    return float((np.abs(signs @ d / n) >= observed - 1e-12).mean())


def paired_randomization_p(a: np.ndarray, b: np.ndarray, n_resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference under random sign flips.

    Exact (all 2^n assignments) for n <= 20; above, Monte Carlo with ``n_resamples`` draws, where the
    +1 in numerator and denominator counts the observed assignment, so p is never 0.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.size == 0:
        return float("nan")
    if d.size <= EXACT_MAX_N:
        return exact_randomization_p(d)
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, _CHUNK):  # chunks keep memory flat on large query sets
        n = min(_CHUNK, n_resamples - start)
        signs = rng.integers(0, 2, size=(n, d.size)) * 2.0 - 1.0
        hits += int((np.abs((signs * d).mean(axis=1)) >= observed - 1e-12).sum())
    return float((hits + 1) / (n_resamples + 1))


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, n_resamples: int = 10000, seed: int = 0, alpha: float = 0.05
) -> tuple[float, float, float]:
    """Bootstrap over queries: (two-sided p-value that the mean difference is 0, CI low, CI high).

    The p-value is twice the share of resampled mean differences on the other side of 0 from the
    observed one (the percentile method).
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            d[rng.integers(0, d.size, size=(min(_CHUNK, n_resamples - s), d.size))].mean(axis=1)
            for s in range(0, n_resamples, _CHUNK)
        ]
    )
    if d.mean() >= 0:
        tail = (means <= 0).mean()
    else:
        tail = (means >= 0).mean()
    p = min(1.0, 2.0 * (tail * n_resamples + 1) / (n_resamples + 1))
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(p), float(lo), float(hi)


def compare(a: np.ndarray, b: np.ndarray, n_resamples: int = 10000, seed: int = 0) -> PairedTest:
    """Both tests at once, with the seed and resample count kept beside the numbers."""
    p_boot, lo, hi = paired_bootstrap(a, b, n_resamples, seed)
    return PairedTest(
        mean_diff=float(np.mean(np.asarray(a) - np.asarray(b))) if len(a) else float("nan"),
        p_randomization=paired_randomization_p(a, b, n_resamples, seed),
        p_bootstrap=p_boot,
        ci_low=lo,
        ci_high=hi,
        n_queries=len(a),
        n_resamples=n_resamples,
        seed=seed,
        exact=0 < len(a) <= EXACT_MAX_N,
    )
