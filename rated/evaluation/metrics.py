"""Evaluation metrics: offline ranking quality (Table 1) and the simulation's reliability metrics (Table 2).

Offline metrics take rankings (tool indices, best first) and the set of relevant tools per query, so a
query of EcoAgent-Real with several ground-truth tools is judged against all of them. Simulation metrics
take a ``Trace`` (one entry per step of the replayed stream) and carry their own window and threshold,
so a table row can say exactly which steps a number covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rated.evaluation.simulator import Trace

Ranking = Sequence[int] | np.ndarray


# --------------------------------------------------------------------------- offline (per query)


def reciprocal_ranks(rankings: Sequence[Ranking], relevant: Sequence[frozenset[int]]) -> np.ndarray:
    """1 / rank of the first relevant tool per query; 0 when none is in the (truncated) ranking."""
    out = np.zeros(len(rankings), dtype=np.float64)
    for i, (ranking, rel) in enumerate(zip(rankings, relevant, strict=True)):
        for rank, tool in enumerate(ranking, start=1):
            if int(tool) in rel:
                out[i] = 1.0 / rank
                break
    return out


def recall_at_k(rankings: Sequence[Ranking], relevant: Sequence[frozenset[int]], k: int) -> np.ndarray:
    """|relevant ∩ top-k| / |relevant| per query (BEIR's definition).

    With several relevant tools (EcoAgent-Real) Recall@1 is at most 1/|relevant|; that is the standard
    definition and keeps the number comparable with BEIR/ToolRet tables.
    """
    out = np.zeros(len(rankings), dtype=np.float64)
    for i, (ranking, rel) in enumerate(zip(rankings, relevant, strict=True)):
        if rel:
            hits = sum(1 for tool in list(ranking)[:k] if int(tool) in rel)
            out[i] = hits / len(rel)
    return out


def ndcg_at_k(rankings: Sequence[Ranking], relevant: Sequence[frozenset[int]], k: int) -> np.ndarray:
    """Binary-relevance nDCG@k per query, the ideal ranking putting min(|relevant|, k) hits first."""
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    out = np.zeros(len(rankings), dtype=np.float64)
    for i, (ranking, rel) in enumerate(zip(rankings, relevant, strict=True)):
        if not rel:
            continue
        gains = np.array([1.0 if int(t) in rel else 0.0 for t in list(ranking)[:k]])
        dcg = float((gains * discounts[: len(gains)]).sum())
        idcg = float(discounts[: min(len(rel), k)].sum())
        out[i] = dcg / idcg
    return out


@dataclass(frozen=True)
class RetrievalScores:
    """Per-query scores of one method on one split; means are what Table 1 prints."""

    rr: np.ndarray
    recall1: np.ndarray
    recall5: np.ndarray
    ndcg10: np.ndarray

    @classmethod
    def compute(cls, rankings: Sequence[Ranking], relevant: Sequence[frozenset[int]]) -> RetrievalScores:
        return cls(
            rr=reciprocal_ranks(rankings, relevant),
            recall1=recall_at_k(rankings, relevant, 1),
            recall5=recall_at_k(rankings, relevant, 5),
            ndcg10=ndcg_at_k(rankings, relevant, 10),
        )

    def means(self) -> dict[str, float]:
        return {
            "MRR": float(self.rr.mean()) if self.rr.size else 0.0,
            "Recall@1": float(self.recall1.mean()) if self.rr.size else 0.0,
            "Recall@5": float(self.recall5.mean()) if self.rr.size else 0.0,
            "nDCG@10": float(self.ndcg10.mean()) if self.rr.size else 0.0,
        }


# --------------------------------------------------------------------------- simulation


def moving_success_rate(success: np.ndarray, window: int) -> np.ndarray:
    """Mean success over the last ``window`` steps, defined from step ``window - 1`` on (shorter output)."""
    s = np.asarray(success, dtype=np.float64)
    if s.size < window:
        return np.zeros(0)
    c = np.concatenate([[0.0], np.cumsum(s)])
    return (c[window:] - c[:-window]) / window


@dataclass(frozen=True)
class PostFailSuccessRate:
    """Post-Fail SR: the share of steps in [start, end) whose selected tool is a true tool and available.

    Steps are 0-based, so the paper's steps 2,001-5,000 are ``start=2000, end=5000``.
    """

    start: int = 2000
    end: int = 5000

    def __call__(self, trace: Trace) -> float:
        window = trace.success[self.start : self.end]
        return float(window.mean()) if window.size else float("nan")


@dataclass(frozen=True)
class FailedSelectionRate:
    """FSR: selections of an unavailable tool / all selections, over steps [start, end).

    A policy that calls several tools in one step (Retry) makes several selections; each call counts.
    """

    start: int = 2000
    end: int = 5000

    def __call__(self, trace: Trace) -> float:
        calls = trace.attempts[self.start : self.end].sum()
        return float(trace.unavailable[self.start : self.end].sum() / calls) if calls else float("nan")


@dataclass(frozen=True)
class AdaptationSteps:
    """AS: steps after the failure onset until the ``window``-step moving SR reaches ``theta`` x peak.

    The peak is the best moving SR over windows that end before the onset. Only windows made entirely
    of post-onset steps count, so the answer is at least ``window``; ``None`` means "Failed" (the
    threshold is never reached before the stream ends, or the pre-failure peak is 0, so there is
    nothing to adapt back to).
    """

    onset: int = 2000
    theta: float = 0.9
    window: int = 200

    def peak(self, trace: Trace) -> float:
        pre = moving_success_rate(trace.success[: self.onset], self.window)
        return float(pre.max()) if pre.size else float("nan")

    def __call__(self, trace: Trace) -> int | None:
        peak = self.peak(trace)
        post = moving_success_rate(trace.success[self.onset :], self.window)
        if not post.size or np.isnan(peak) or peak <= 0:
            return None  # no pre-failure success to get back to: undefined, reported like "Failed"
        reached = np.flatnonzero(post >= self.theta * peak - 1e-12)
        if not reached.size:
            return None
        return int(reached[0]) + self.window  # post[j] covers post-onset steps j .. j+window-1


@dataclass(frozen=True)
class AdaptationStepsPaper:
    """AS as the paper can report 0, 1 or 70: the first m >= 0 such that the ``window``-step moving SR
    whose window *ends at* step onset + m (so it may still hold pre-onset steps) is >= ``theta`` x the
    pre-failure peak. ``None`` = "Failed" (never reached, or no pre-failure success)."""

    onset: int = 2000
    theta: float = 0.9
    window: int = 200

    def __call__(self, trace: Trace) -> int | None:
        peak = AdaptationSteps(self.onset, self.theta, self.window).peak(trace)
        if np.isnan(peak) or peak <= 0 or self.onset < self.window - 1:
            return None
        ma = moving_success_rate(trace.success, self.window)  # ma[j] covers steps j .. j + window - 1
        post = ma[self.onset - self.window + 1 :]  # post[m] is the window ending at step onset + m
        reached = np.flatnonzero(post >= self.theta * peak - 1e-12)
        return int(reached[0]) if reached.size else None


@dataclass(frozen=True)
class CumulativeRegret:
    """Regret against an oracle that picks an available true tool whenever one exists.

    ``curve`` is the running sum of (oracle success - policy success); calling gives its value after
    ``end`` steps (all steps when ``end`` is None).
    """

    end: int | None = None

    @staticmethod
    def curve(trace: Trace) -> np.ndarray:
        return np.cumsum(trace.oracle.astype(np.int64) - trace.success.astype(np.int64))

    def __call__(self, trace: Trace) -> float:
        c = self.curve(trace)
        if not c.size:
            return 0.0
        return float(c[-1] if self.end is None else c[min(self.end, c.size) - 1])


@dataclass(frozen=True)
class WindowSuccessRate:
    """SR over steps [start, end), optionally only on steps whose query satisfies ``query_mask``.

    Used past the paper: SR after failed tools come back, and SR on queries whose true tool is new.
    """

    start: int
    end: int

    def __call__(self, trace: Trace, step_mask: np.ndarray | None = None) -> float:
        s = trace.success[self.start : self.end]
        if step_mask is not None:
            s = s[np.asarray(step_mask)[self.start : self.end]]
        return float(s.mean()) if s.size else float("nan")
