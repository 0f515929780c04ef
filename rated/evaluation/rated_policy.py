"""RATED in the simulation and in offline ranking, through the library's embedding-level API.

The simulator feeds pre-encoded queries. The index is frozen during a run, so the top-K search of
every pool query is done once, as one matrix product, and cached; a step then costs the fused bandit
scoring of K tools (``bandits.fused``, exactly what ``RATED.rank_embedding`` computes) and one O(d) update
through ``RATED.feedback_embedding``. The bandit's state after warm-up is kept (``state_dict``) so
every run of every seed starts from the same point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def top_k(query_emb: np.ndarray, tool_emb: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``ToolIndex.search`` for a batch: top-k rows by dot product, best first, ties to the lower row."""
    scores = np.asarray(query_emb, dtype=np.float32) @ np.asarray(tool_emb, dtype=np.float32).T
    k = min(k, scores.shape[1])
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    idx = np.take_along_axis(part, order, axis=1).astype(np.int64)
    return idx, np.take_along_axis(scores, idx, axis=1)


class RatedPolicy:
    """One RATED variant as a simulation policy: rank with the fused score, learn from the chosen tool.

    Args:
        model: a ``rated.RATED`` of any variant (``no_feedback`` ignores feedback by itself).
        query_emb: embeddings of the stream's query pool, [n_queries, d], from ``model.encode``.
        name: the row label in the tables.
    """

    max_attempts = 1

    def __init__(self, model: Any, query_emb: np.ndarray, name: str) -> None:
        self.model = model
        self.query_emb = np.ascontiguousarray(query_emb, dtype=np.float32)
        self.name = name
        self.k = int(model.config.top_k)
        self._weights = tuple(model.config.weights)
        self._idx, self._sem = top_k(self.query_emb, model.index.embeddings, self.k)
        self._cold = model.bandits.state_dict()  # the model is expected fresh: this is the prior start
        self._snapshot = self._cold
        self._arrival: np.ndarray | None = None
        self.warm_up_stats: dict[str, float] = {}

    def warm_up(self, pairs_emb: np.ndarray, relevant: Sequence[frozenset[int]]) -> dict[str, float]:
        """``RATED.warm_up`` on (embedding, true tools) pairs from the cold state, every tool available:
        select the best fused tool, learn ``success = it is a true tool``. The searches are batched (the
        result equals ``RATED.warm_up``'s, see the tests); the state after it is what each run starts from.
        """
        self.model.bandits.load_state_dict(self._cold)
        emb = np.ascontiguousarray(pairs_emb, dtype=np.float32)
        idx_all, sem_all = top_k(emb, self.model.index.embeddings, self.k) if len(emb) else (None, None)
        hits = 0
        for n, rel in enumerate(relevant):
            idx, sem = idx_all[n], sem_all[n]
            tool = int(idx[self.model.bandits.fused(idx, sem, emb[n], self._weights)[1]])
            ok = tool in rel
            hits += ok
            self.model.feedback_embedding(tool, emb[n], ok)
        n = len(relevant)
        self.warm_up_stats = {"pairs": n, "successes": hits, "success_rate": hits / n if n else 0.0}
        self._snapshot = self.model.bandits.state_dict()
        return self.warm_up_stats

    def reset(self, arrival: np.ndarray) -> None:
        self.model.bandits.load_state_dict(self._snapshot)
        self._arrival = arrival if arrival.any() else None

    def fused(self, idx: np.ndarray, sem: np.ndarray, emb: np.ndarray) -> np.ndarray:
        return self.model.bandits.fused(idx, sem, emb, self._weights)[0]

    def ranking(self, emb: np.ndarray) -> np.ndarray:
        """Top-K tool indices by RATED's final score, best first (``RATED.rank_embedding``)."""
        idx, _ = self.model.rank_embedding(np.asarray(emb, dtype=np.float32))
        return np.asarray(idx, dtype=np.int64)

    def select(self, step: int, query: int) -> int:
        idx, sem = self._idx[query], self._sem[query]
        final = self.fused(idx, sem, self.query_emb[query])
        if self._arrival is not None:
            final = np.where(self._arrival[idx] <= step, final, -np.inf)
        return int(idx[int(np.argmax(final))])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        self.model.feedback_embedding(tool, self.query_emb[query], success)
