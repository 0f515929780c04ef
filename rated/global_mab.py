"""The "w/ Global MAB" ablation: one context-free discounted success rate per tool, same interface as LinUCB.

It answers the ablation's question, whether the query context matters for reliability, by keeping
everything else equal: the same discount, regularizer, prior start and bonus width as
``DiscountedLinUCB``, with a constant context.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rated.bandit import ToolBandit
from rated.fusion import fuse_unchecked


class GlobalMAB(ToolBandit):
    r"""Discounted UCB per tool that ignores the query: a success mean with the prior as pseudo-evidence.

    Tool i keeps a discounted count ``n_i`` and discounted reward sum ``s_i``:

    - score: ``s_i / n_i + alpha / sqrt(n_i)``.
    - update after reward r of the chosen tool only, counted w times: ``n_i <- gamma * n_i + (1 - gamma)
      * lam + w``, ``s_i <- gamma * s_i + w * r`` (the count never falls below ``lam``, as LinUCB's diagonal).
    - cold start: ``n_i = lam``, ``s_i = lam * prior_i``, so the score is ``prior_i + alpha / sqrt(lam)``
      before feedback, exactly LinUCB's cold-start score for a unit context.

    Args:
        dim: dimension of the query embeddings (checked, then ignored: the statistic is context-free).
        prior: the metadata prior of every tool, in [0, 1].
        alpha: width of the exploration bonus, >= 0.
        gamma: discount per update of a tool, in (0, 1].
        lam: weight of the prior as pseudo-observations, > 0.

    References:
        Garivier and Moulines, "On Upper-Confidence Bound Policies for Switching Bandit Problems", ALT 2011.

    Example:
        >>> import numpy as np
        >>> mab = GlobalMAB(dim=2, prior=[0.5])
        >>> mab.update(0, np.zeros(2), reward=1.0)
        >>> round(float(mab.scores(np.array([0]), np.zeros(2))[0]), 4)  # (0.475 + 1) / 2 + 0.1 / sqrt(2)
        0.8082
    """

    def _reset(self) -> None:
        self._of: dict[int, int] = {}
        self._arms: list[int] = []
        self._n = np.empty(0)
        self._s = np.empty(0)

    @property
    def touched(self) -> list[int]:
        return list(self._of)

    def scores(self, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``s_i / n_i + alpha / sqrt(n_i)`` of tools ``idx``; ``x`` is ignored (context-free)."""
        idx = np.asarray(idx)
        with self._lock:
            out = self.prior[idx] + self.alpha / math.sqrt(self.lam)
            if self._of:
                rows = [(k, self._of[i]) for k, i in enumerate(idx.tolist()) if i in self._of]
                if rows:
                    pos, slot = (list(v) for v in zip(*rows, strict=True))
                    n = self._n[slot]
                    out[pos] = self._s[slot] / n + self.alpha / np.sqrt(n)
            return out

    def fused(
        self, idx: np.ndarray, sem: np.ndarray, x: np.ndarray, weights: Sequence[float]
    ) -> tuple[np.ndarray, int]:
        """Fused scores of the candidates and the best position (``DiscountedLinUCB.fused``'s interface)."""
        out = fuse_unchecked(sem, self.scores(idx, x), self.prior[idx], weights)
        return out, int(np.argmax(out))

    def update(self, i: int, x: np.ndarray, reward: float, weight: float = 1.0) -> None:
        """Discounted update of tool ``i`` only, the reward counted ``weight`` times; ``x`` is ignored."""
        i = self._checked_arm(i, weight)
        with self._lock:
            row = self._of.get(i)
            if row is None:
                row = len(self._arms)
                if row == self._n.size:
                    self._n = np.resize(self._n, max(8, 2 * row))
                    self._s = np.resize(self._s, max(8, 2 * row))
                self._of[i] = row
                self._arms.append(i)
                self._n[row], self._s[row] = self.lam, self.lam * self.prior[i]
            self._n[row] = self.gamma * self._n[row] + (1.0 - self.gamma) * self.lam + float(weight)
            self._s[row] = self.gamma * self._s[row] + float(weight) * float(reward)

    def state_of(self, i: int) -> tuple[float, float]:
        """``(n_i, s_i)``; the cold-start values for an untouched tool."""
        with self._lock:
            row = self._of.get(int(i))
            if row is None:
                return self.lam, self.lam * float(self.prior[int(i)])
            return float(self._n[row]), float(self._s[row])

    def nbytes(self) -> int:
        return int(self._n.nbytes + self._s.nbytes + self.prior.nbytes)

    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            k = len(self._arms)
            return {
                "kind": "global_mab",
                "arms": np.asarray(self._arms, dtype=np.int64),
                "n": self._n[:k].copy(),
                "s": self._s[:k].copy(),
                "settings": self.settings(),
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace all per-tool state by ``state`` (from ``state_dict``); priors are kept."""
        if state.get("kind") != "global_mab":
            raise ValueError(f"state is for a {state.get('kind')!r} bandit, not global_mab")
        arms = np.asarray(state["arms"], dtype=np.int64)
        n, s = np.asarray(state["n"], dtype=np.float64), np.asarray(state["s"], dtype=np.float64)
        if not arms.shape == n.shape == s.shape:
            raise ValueError("state arrays differ in length")
        if arms.size and (arms.min() < 0 or arms.max() >= self.prior.size):
            raise ValueError("state names tools outside this catalog")
        with self._lock:
            self._arms = arms.tolist()
            self._of = {a: k for k, a in enumerate(self._arms)}
            self._n, self._s = n.copy(), s.copy()
