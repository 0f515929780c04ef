"""The reliability module: one discounted, diagonal LinUCB per tool, started from the metadata prior.

Each tool keeps a ridge estimate of how well it serves a query context. Only the chosen tool learns
from a step's feedback, old evidence fades by ``gamma`` per update (so a tool that recovers can win
again), and the diagonal approximation keeps scoring and updating at O(d) per tool.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from rated import kernels
from rated.fusion import as_coefficients
from rated.kernels import BIAS


def as_priors(prior: Sequence[float] | np.ndarray) -> np.ndarray:
    """Priors as float64 in [0, 1] (clipped), failing on NaN so a broken prior column is not hidden."""
    arr = np.asarray(prior, dtype=np.float64).reshape(-1)
    if np.isnan(arr).any():
        raise ValueError("prior contains NaN")
    return np.clip(arr, 0.0, 1.0)


def check_hyperparameters(dim: int, alpha: float, gamma: float, lam: float) -> None:
    """Reject bandit settings that would make the scores meaningless (shared by every bandit variant)."""
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be > 0, got {lam}")


class ToolBandit(ABC):
    """What every per-tool reliability module shares: settings, priors, a lock, and the interface RATED
    calls (``scores``, ``fused``, ``update``, ``state_dict``). Only the chosen tool learns, counted
    ``weight`` times; tools are indices into the catalog's priors; ``add_arms`` appends cold tools.
    """

    def __init__(
        self,
        dim: int,
        prior: Sequence[float] | np.ndarray,
        alpha: float = 0.1,
        gamma: float = 0.95,
        lam: float = 1.0,
    ) -> None:
        check_hyperparameters(dim, alpha, gamma, lam)
        self.dim, self.alpha, self.gamma, self.lam = dim, float(alpha), float(gamma), float(lam)
        self.prior = as_priors(prior)
        self._lock = threading.Lock()
        self._reset()

    @abstractmethod
    def _reset(self) -> None:
        """Empty per-tool state for the current priors: every tool cold."""

    @property
    def n_arms(self) -> int:
        return int(self.prior.size)

    def settings(self) -> dict[str, Any]:
        """The hyper-parameters a ``state_dict`` records beside the state."""
        return {"dim": self.dim, "alpha": self.alpha, "gamma": self.gamma, "lam": self.lam}

    def add_arms(self, prior: Sequence[float] | np.ndarray) -> None:
        """Append tools (their priors); they start cold, with no state."""
        added = as_priors(prior)
        with self._lock:
            self.prior = np.concatenate([self.prior, added])
            self._grow(added.size)

    def _grow(self, count: int) -> None:
        """Make room for ``count`` more tools (called under the lock); nothing by default."""
        del count  # a bandit that keeps state only for touched tools has nothing to grow

    def _checked_arm(self, i: int, weight: float) -> int:
        """``i`` as an int, after checking it names a tool and ``weight`` is a positive count."""
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"weight must be > 0, got {weight}")
        i = int(i)
        if not 0 <= i < self.prior.size:
            raise IndexError(f"tool index {i} out of range (0..{self.prior.size - 1})")
        return i

    @property
    @abstractmethod
    def touched(self) -> list[int]:
        """Tool indices that have state (received feedback), in order of first feedback."""

    @abstractmethod
    def scores(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Upper confidence scores of tools ``idx`` for the query embedding ``x`` (not clipped)."""

    @abstractmethod
    def fused(
        self, idx: np.ndarray, sem: np.ndarray, x: np.ndarray, weights: Sequence[float]
    ) -> tuple[np.ndarray, int]:
        """Fused scores of the candidates (``rated.fusion``) and the best position."""

    @abstractmethod
    def update(self, i: int, x: np.ndarray, reward: float, weight: float = 1.0) -> None:
        """Learn from tool ``i``'s reward for the query ``x``, counted ``weight`` times (tool ``i`` only)."""

    @abstractmethod
    def nbytes(self) -> int:
        """Bytes held by per-tool state and priors."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Arrays and settings that ``load_state_dict`` restores (arms are tool indices)."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace all per-tool state by ``state`` (from ``state_dict``); priors are kept."""


class _Slots:
    """Growable per-tool state: a row map over all tools, and arrays for the touched ones that grow by doubling.

    ``rowmap[i]`` is tool i's row, or -1 while it has received no feedback. Only tools with feedback get a
    row of state, so a catalog of a million tools costs 4 bytes per tool for the map (half its prior's
    8) plus state for the tools that were used. A dense map, not a dict, lets the compiled kernels find
    the K candidates' rows without a Python loop.
    """

    def __init__(self, widths: dict[str, tuple[int, type]], n_arms: int) -> None:
        self.widths = dict(widths)
        self.rowmap = np.full(n_arms, -1, dtype=np.int32)
        self.n = 0
        self.arms = np.empty(0, dtype=np.int64)
        self.arrays = {name: np.empty((0, w), dtype=t) for name, (w, t) in self.widths.items()}

    def __len__(self) -> int:
        return self.n

    def add_arms(self, count: int) -> None:
        self.rowmap = np.concatenate([self.rowmap, np.full(count, -1, dtype=np.int32)])

    def row(self, arm: int) -> int:
        """The row of ``arm``, or -1."""
        return int(self.rowmap[arm])

    def new(self, arm: int) -> int:
        """Append a row for ``arm`` (growing the arrays when full) and return its index."""
        row = self.n
        if row == self.arms.shape[0]:
            capacity = max(8, 2 * row)
            self.arms = np.resize(self.arms, capacity)
            for name, (width, dtype) in self.widths.items():
                grown = np.empty((capacity, width), dtype=dtype)
                grown[:row] = self.arrays[name][:row]
                self.arrays[name] = grown
        self.rowmap[arm] = row
        self.arms[row] = arm
        self.n += 1
        return row

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays.values()) + self.arms.nbytes + self.rowmap.nbytes)


class DiscountedLinUCB(ToolBandit):
    r"""Discounted LinUCB with a diagonal design matrix, one per tool, cold-started from a prior.

    The context of a query embedding ``x`` (L2-normalized, dimension d) is ``x~ = (x, 1) / sqrt(2)``, of
    dimension d + 1 and unit norm; the constant coordinate lets each tool learn a query-independent
    success rate besides the query-dependent part. Tool i keeps diagonal ``A_i`` and vector ``b_i``:

    - score: ``theta_i . x~ + alpha * sqrt(sum_j x~_j^2 / A_ij)`` with ``theta_i = b_i / A_i``
      (element-wise: the inverse of a diagonal matrix), O(d) per tool.
    - update after reward r of the chosen tool only, counted ``w`` times (weighted least squares):
      ``A_i <- gamma * A_i + (1 - gamma) * lam + w * x~ * x~`` and ``b_i <- gamma * b_i + w * r * x~``.
      ``rated.retriever.RATED`` maps a call's outcome to (r, w): 1 for a call that worked, 0 for one
      that worked but was the wrong tool (the labelled warm-up), and ``RATEDConfig.error_reward`` with
      weight ``error_weight`` for an error (docs/evaluation.md, "Why one failure did not move RATED").
      The ``(1 - gamma) * lam`` term keeps the ridge regularizer at ``lam`` under discounting
      (an entry never seen stays exactly ``lam``, none falls below it), as in D-LinUCB.
    - cold start: ``A_i = lam * 1`` and ``b_i = lam * prior_i * x0 / |x0|^2`` with ``x0 = e_{d+1} / sqrt(2)``
      the constant part of every context. Since ``x0 . x~ = |x0|^2`` for every query,
      ``theta_i . x~ = prior_i`` exactly before feedback, whatever the query. The prior's weight in
      ``b`` fades by ``gamma`` per update like any other evidence.

    A tool that never received feedback has no state: its score is ``prior_i + alpha * |x~| / sqrt(lam)``
    in closed form, so memory grows only with the tools that were used: A, b and a cache of theta and
    A^-1, 16 (d + 1) bytes per tool, plus a 4-byte row map over the catalog. The per-tool state is
    float32 like the embeddings, and so is the arithmetic (a sum over d carries about 1e-7 relative
    error); discounting keeps rounding errors from accumulating. Scoring and updating run as compiled loops (``rated.kernels``): one pass over each
    candidate's cached row, no context array materialized.

    Args:
        dim: dimension d of the query embeddings.
        prior: the metadata prior of every tool, in [0, 1] (values outside are clipped).
        alpha: width of the exploration bonus, >= 0 (paper: 0.1).
        gamma: discount per update of a tool, in (0, 1] (paper: 0.95).
        lam: ridge regularizer, > 0.

    References:
        Li et al., "A Contextual-Bandit Approach to Personalized News Article Recommendation", WWW 2010.
        Russac, Vernade and Cappe, "Weighted Linear Bandits for Non-Stationary Environments", NeurIPS 2019.

    Example:
        >>> import numpy as np
        >>> bandit = DiscountedLinUCB(dim=2, prior=[0.8, 0.3])
        >>> x = np.array([1.0, 0.0])
        >>> bandit.scores(np.array([0, 1]), x).round(3).tolist()
        [0.9, 0.4]
        >>> bandit.update(0, x, reward=0.0)
        >>> bool(bandit.scores(np.array([0]), x)[0] < 0.9)
        True
    """

    def _reset(self) -> None:
        self._slots = self._empty_slots(self.prior.size)

    def _empty_slots(self, n_arms: int) -> _Slots:
        # per touched tool: A and b (the state), and a cache row [theta | A^-1] read by the scoring kernel
        width = self.dim + 1
        return _Slots(
            {"A": (width, np.float32), "b": (width, np.float32), "cache": (2 * width, np.float32)}, n_arms
        )

    # ------------------------------------------------------------------ arms
    @property
    def touched(self) -> list[int]:
        return self._slots.arms[: len(self._slots)].tolist()

    def _grow(self, count: int) -> None:
        self._slots.add_arms(count)

    # --------------------------------------------------------------- context
    def _query(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if x.shape != (self.dim,):
            raise ValueError(f"context must have shape ({self.dim},), got {x.shape}")
        return x

    def context(self, x: np.ndarray) -> np.ndarray:
        """The bandit context ``x~ = (x, 1) / sqrt(2)`` of a query embedding (a new array)."""
        return np.append(self._query(x), np.float32(1.0)) * np.float32(BIAS)

    # --------------------------------------------------------------- scoring
    def scores(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        """UCB scores ``theta_i . x~ + alpha * sqrt(x~^T A_i^-1 x~)`` of tools ``idx`` (not clipped).

        Args:
            idx: tool indices (int array).
            x: the L2-normalized query embedding, shape (d,).
        """
        idx = np.asarray(idx, dtype=np.int64)
        x = self._query(x)
        out = np.empty(idx.shape[0], dtype=np.float64)
        with self._lock:
            s = self._slots
            if kernels.linucb_scores(idx, x, s.rowmap, s["cache"], self.prior, self.alpha, self.lam, out):
                raise IndexError(f"tool indices out of range (0..{self.prior.size - 1}): {idx.tolist()}")
        return out

    def fused(
        self, idx: np.ndarray, sem: np.ndarray, x: np.ndarray, weights: Sequence[float]
    ) -> tuple[np.ndarray, int]:
        """Fused scores of the candidates (``rated.fusion.fuse`` of their UCB scores) and the best position.

        The hot path of a decision: one compiled pass over the K candidates' rows. ``idx`` (int64) and
        ``sem`` (float32) are ``ToolIndex.search``'s output, ``x`` the query embedding; ``weights``
        are ``rated.fusion.coefficients`` (or the paper's three weights), validated by the caller. Shapes and indices are checked (a compiled loop has no bounds checks).
        """
        x = self._query(x)
        out = np.empty(idx.shape[0], dtype=np.float64)
        c, a, w2, w3, lo = as_coefficients(weights)
        with self._lock:
            s = self._slots
            best = kernels.linucb_fused(
                idx, sem, x, s.rowmap, s["cache"], self.prior, self.alpha, self.lam, c, a, w2, w3, lo, out
            )
        if best < 0:
            raise IndexError(
                f"bad candidates: indices {idx.tolist()} (0..{self.prior.size - 1}), {sem.size} scores"
            )
        return out, best

    # ---------------------------------------------------------------- update
    def _init_row(self, arm: int) -> int:
        row = self._slots.new(arm)
        A, b = self._slots["A"][row], self._slots["b"][row]
        A.fill(self.lam)
        b.fill(0.0)
        # b0 = lam * prior * x0 / |x0|^2 with x0 = BIAS * e_{d+1}: theta0 . x~ = prior for every x
        b[self.dim] = self.lam * self.prior[arm] / BIAS
        return row

    def update(self, i: int, x: np.ndarray, reward: float, weight: float = 1.0) -> None:
        """Discounted ridge update of tool ``i`` only, after reward ``reward`` counted ``weight`` times.

        Args:
            i: the chosen tool's index.
            x: the L2-normalized query embedding the tool was chosen for, shape (d,).
            reward: the observed reward (1 a call that worked; 0 or negative otherwise).
            weight: how many observations this one counts for, > 0.
        """
        i = self._checked_arm(i, weight)
        x = self._query(x)
        with self._lock:
            s = self._slots
            row = s.row(i)
            if row < 0:
                row = self._init_row(i)
            kernels.linucb_update(
                row, x, float(reward), float(weight), s["A"], s["b"], s["cache"], self.gamma, self.lam
            )

    # ----------------------------------------------------------- inspection
    def state_of(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Copies of ``(A_i, b_i)`` (diagonal of A); the cold-start values for an untouched tool."""
        with self._lock:
            row = self._slots.row(int(i))
            if row >= 0:
                return self._slots["A"][row].copy(), self._slots["b"][row].copy()
            A = np.full(self.dim + 1, self.lam, dtype=np.float32)
            b = np.zeros(self.dim + 1, dtype=np.float32)
            b[self.dim] = self.lam * self.prior[int(i)] / BIAS
            return A, b

    def nbytes(self) -> int:
        """Bytes held by per-tool state and priors (the allocated capacity)."""
        return self._slots.nbytes() + int(self.prior.nbytes)

    # ---------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """Arrays and settings that ``load_state_dict`` restores (arms are tool indices)."""
        with self._lock:
            n = len(self._slots)
            return {
                "kind": "linucb",
                "arms": self._slots.arms[:n].copy(),
                "A": self._slots["A"][:n].copy(),
                "b": self._slots["b"][:n].copy(),
                "settings": self.settings(),
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace all per-tool state by ``state`` (from ``state_dict``); priors are kept.

        Raises:
            ValueError: the state is of another kind or dimension, or names a tool out of range.
        """
        if state.get("kind") != "linucb":
            raise ValueError(f"state is for a {state.get('kind')!r} bandit, not linucb")
        A, b, arms = np.asarray(state["A"]), np.asarray(state["b"]), np.asarray(state["arms"])
        if A.shape[1:] != (self.dim + 1,) or b.shape != A.shape or arms.shape != (A.shape[0],):
            raise ValueError(f"state shapes {A.shape}/{b.shape}/{arms.shape} do not fit dim {self.dim}")
        if arms.size and (arms.min() < 0 or arms.max() >= self.prior.size):
            raise ValueError("state names tools outside this catalog")
        with self._lock:
            slots = self._empty_slots(self.prior.size)
            for arm, a_row, b_row in zip(arms.tolist(), A, b, strict=True):
                row = slots.new(int(arm))
                slots["A"][row] = a_row
                slots["b"][row] = b_row
                kernels.linucb_refresh(row, slots["A"], slots["b"], slots["cache"])  # as update() does
            self._slots = slots
