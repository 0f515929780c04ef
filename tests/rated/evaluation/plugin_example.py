"""An example plug-in pair (the one docs/evaluation.md shows): a word-overlap retriever and an online
policy that drops a tool after two errors. Used by test_pipeline through ``--retriever``/``--policy``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from rated.evaluation.plugins import PolicyContext


class WordOverlap:
    """Scores = number of distinct query words in the tool document."""

    name = "Word overlap (plug-in)"

    def fit(self, documents: Sequence[str]) -> WordOverlap:
        self.docs = [set(d.lower().split()) for d in documents]
        return self

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        return np.array([[len(set(q.lower().split()) & d) for d in self.docs] for q in queries], dtype=float)


class TwoStrikes:
    """Top candidate that has errored fewer than twice (execution-only feedback)."""

    name = "Two strikes (plug-in)"
    max_attempts = 1

    def __init__(self, context: PolicyContext) -> None:
        self.cands, self.k = context.candidates, context.k

    def reset(self, arrival: np.ndarray) -> None:
        self.errors: Counter[int] = Counter()
        self.arrival = arrival

    def select(self, step: int, query: int) -> int:
        present = [int(t) for t in self.cands.idx[query] if self.arrival[t] <= step][: self.k]
        return next((t for t in present if self.errors[t] < 2), present[0])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.errors[tool] += error
