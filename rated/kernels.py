"""Compiled inner loops of the reliability module: LinUCB scores fused with the rerank, and the update.

One decision touches K candidate tools at O(d) each: about 15,000 multiply-adds at K = 10, d = 768.
As numpy calls this is some 25 tiny array operations whose dispatch, not arithmetic, sets the cost
(about 0.1 ms here, against the issue's 0.05 ms budget); numba compiles each step into one loop
that reads each tool's cached row once. The formulas are those documented in ``rated.bandit`` and
``rated.fusion``; ``tests/rated/test_kernels.py`` checks them against plain numpy.

The last two kernels are the simulation's full-matrix D-LinUCB baseline
(``rated.evaluation.baselines.FullLinUCB``, float64, its own slot layout), compiled so that the baseline's
cost is its O(d^3) update, not Python dispatch; ``tests/rated/evaluation/test_baselines.py`` checks its
scores against the formula.

Layout shared with ``DiscountedLinUCB``: ``rowmap[i]`` is tool i's row in the state arrays, or -1
for a tool with no feedback yet (its score is the cold-start closed form). ``cache[row]`` holds
``[theta | A^-1]`` (2 (d + 1) float32), ``A[row]`` and ``b[row]`` the diagonal state. Contexts are
never materialized: ``x~ = (x, 1) / sqrt(2)`` is applied on the fly. Arithmetic is float32 like the
state (the sums over d carry about 1e-7 relative error), the final score float64.

Compiled on first use (about a second) and cached on disk by numba (``cache=True``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

BIAS = 1.0 / math.sqrt(2.0)  # the constant coordinate of the context; x~ = (x, 1) / sqrt(2)
# Let LLVM reorder the sums over d so it can vectorize them (a strict left-to-right float64 sum is
# bound by the add latency, ~3x slower); no assumptions about NaN or infinities are allowed.
FASTMATH = {"reassoc", "contract"}


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
def _ucb(x, rowmap, cache, prior, alpha, lam, i):  # pragma: no cover - compiled
    """UCB score of tool ``i`` for query embedding ``x`` (its cold-start closed form when untouched)."""
    d = x.shape[0]
    row = rowmap[i]
    if row < 0:
        norm2 = np.float32(0.0)
        for j in range(d):
            norm2 += x[j] * x[j]
        return prior[i] + alpha * math.sqrt(0.5 * (np.float64(norm2) + 1.0) / lam)
    theta, ainv = cache[row, :d], cache[row, d + 1 : 2 * d + 1]
    mean = np.float32(0.0)
    var = np.float32(0.0)
    for j in range(d):  # float32 like the state: vectorizes twice as wide as float64
        mean += theta[j] * x[j]
        var += ainv[j] * (x[j] * x[j])
    mean_all = (np.float64(mean) + cache[row, d]) * BIAS
    var_all = 0.5 * (np.float64(var) + cache[row, 2 * d + 1])
    return mean_all + alpha * math.sqrt(var_all)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
def linucb_scores(idx, x, rowmap, cache, prior, alpha, lam, out):  # pragma: no cover - compiled
    """``out[k]`` = UCB score of tool ``idx[k]``: ``theta . x~ + alpha * sqrt(x~^T A^-1 x~)``.

    Returns 0, or -1 (and leaves ``out`` unfinished) when a tool index is out of range.
    """
    n = rowmap.shape[0]
    for k in range(idx.shape[0]):
        i = idx[k]
        if i < 0 or i >= n:
            return -1
        out[k] = _ucb(x, rowmap, cache, prior, alpha, lam, i)
    return 0


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
def linucb_fused(idx, sem, x, rowmap, cache, prior, alpha, lam, c, a, w2, w3, lo, out):  # pragma: no cover
    """``out[k]`` = fused score of candidate k (``rated.fusion.fuse``); returns the best position.

    ``c + a * sem + w2 * clip(ucb, lo, 1) + w3 * prior`` (``rated.fusion.coefficients``: the paper's
    ``w1 * cos`` is ``c = 0, a = w1``; ``lo`` is 0 in the paper-exact fusion, ``-inf`` by default); ties
    go to the first (the semantic order), as ``np.argmax`` does. Returns -1 when a tool index is out of
    range or ``sem`` is too short.
    """
    n = rowmap.shape[0]
    if sem.shape[0] < idx.shape[0]:
        return -1
    best = 0
    for k in range(idx.shape[0]):
        i = idx[k]
        if i < 0 or i >= n:
            return -1
        ucb = min(max(_ucb(x, rowmap, cache, prior, alpha, lam, i), lo), 1.0)
        out[k] = c + a * sem[k] + w2 * ucb + w3 * prior[i]
        if out[k] > out[best]:
            best = k
    return best


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
def linucb_update(row, x, reward, weight, A, b, cache, gamma, lam):  # pragma: no cover - compiled
    """Discounted, weighted ridge update of one tool's row, then its cached ``theta`` and ``A^-1`` (float32).

    ``A <- gamma * A + (1 - gamma) * lam + weight * x~^2``, ``b <- gamma * b + weight * reward * x~``
    (``weight`` counts the observation that many times: ``rated.config.RATEDConfig.error_weight``).
    """
    d = x.shape[0]
    g, r, s = np.float32(gamma), np.float32(reward * weight), np.float32(BIAS)
    w = np.float32(weight)
    keep = np.float32((1.0 - gamma) * lam)
    a_row, b_row = A[row], b[row]
    theta, ainv = cache[row, : d + 1], cache[row, d + 1 :]
    # one simple loop per array: each vectorizes on its own
    for j in range(d):
        xj = x[j] * s
        a_row[j] = g * a_row[j] + keep + w * (xj * xj)
    for j in range(d):
        b_row[j] = g * b_row[j] + r * (x[j] * s)
    a_row[d] = g * a_row[d] + keep + w * (s * s)  # the constant coordinate
    b_row[d] = g * b_row[d] + r * s
    one = np.float32(1.0)
    for j in range(d + 1):
        ainv[j] = one / a_row[j]
    for j in range(d + 1):
        theta[j] = b_row[j] * ainv[j]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH)
def linucb_refresh(row, A, b, cache):  # pragma: no cover - compiled
    """Recompute one row's cached ``theta = b / A`` and ``A^-1`` from its state (after a load)."""
    n = A.shape[1]
    one = np.float32(1.0)
    for j in range(n):
        cache[row, n + j] = one / A[row, j]
        cache[row, j] = b[row, j] * cache[row, n + j]


@numba.njit(cache=True, nogil=True)
def full_linucb_scores(idx, x, slot, Vinv, theta, prior, alpha, lam, out):  # pragma: no cover - compiled
    """``out[k]`` = D-LinUCB score of tool ``idx[k]`` with the full matrix (the simulation's baseline,
    ``rated.evaluation.baselines.FullLinUCB``): ``theta . x + alpha sqrt(x^T V^-1 x)``, or the cold
    start's ``prior + alpha |x| / sqrt(lam)`` for a tool with no slot. Float64 throughout.

    Returns 0, or -1 (and leaves ``out`` unfinished) when a tool index is out of range.
    """
    d = x.shape[0]
    n = slot.shape[0]
    norm2 = 0.0
    for j in range(d):
        norm2 += x[j] * x[j]
    for k in range(idx.shape[0]):
        if idx[k] < 0 or idx[k] >= n:
            return -1
        s = slot[idx[k]]
        if s < 0:
            out[k] = prior[idx[k]] + alpha * math.sqrt(norm2 / lam)
            continue
        mean = 0.0
        width = 0.0
        for i in range(d):
            mean += theta[s, i] * x[i]
            row = 0.0
            for j in range(d):
                row += Vinv[s, i, j] * x[j]
            width += x[i] * row
        out[k] = mean + alpha * math.sqrt(max(width, 0.0))
    return 0


@numba.njit(cache=True, nogil=True)
def full_linucb_update(s, x, reward, V, b, Vinv, theta, gamma, reg):  # pragma: no cover - compiled
    """Slot ``s``: ``V <- gamma V + x x^T + reg I``, ``b <- gamma b + reward x``, then ``V^-1`` and
    ``theta = V^-1 b`` (one LAPACK inverse, O(d^3): what RATED's diagonal avoids)."""
    d = x.shape[0]
    for i in range(d):
        b[s, i] = gamma * b[s, i] + reward * x[i]
        for j in range(d):
            V[s, i, j] = gamma * V[s, i, j] + x[i] * x[j]
        V[s, i, i] += reg
    inv = np.linalg.inv(V[s])
    Vinv[s] = inv
    theta[s] = inv @ b[s]
