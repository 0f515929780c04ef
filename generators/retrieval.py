"""The yield check: does a generated query retrieve its own tool among the whole tool table?

A query is useful when MiniLM ranks its tool in the top 10 of every tool in the table; the yield of a
tool is the number of its distinct (deduplicated) queries that do. It measures whether the generator
stays on topic, which the 135M embedded model often does not.

``label_ranks`` is the same check under the benchmark's own labels: the evaluation counts a tool's
cross-platform equivalents (``generators.equivalents``) as true tools of its queries, so a query for a
weather tool that ranks another platform's identical weather tool first is on topic, not a miss.
"""

from __future__ import annotations

import numpy as np


def self_ranks(
    query_emb: np.ndarray, tool_emb: np.ndarray, positive: np.ndarray, chunk: int = 4096
) -> np.ndarray:
    """1-based rank of each query's own tool by cosine over all tools (ties count against the tool)."""
    positive = np.asarray(positive)
    ranks = np.empty(len(positive), dtype=np.int64)
    for start in range(0, len(positive), chunk):
        scores = query_emb[start : start + chunk] @ tool_emb.T
        own = scores[np.arange(scores.shape[0]), positive[start : start + chunk]]
        ranks[start : start + chunk] = (scores >= own[:, None]).sum(axis=1)
    return ranks


def label_ranks(
    query_emb: np.ndarray,
    tool_emb: np.ndarray,
    positive: np.ndarray,
    equivalents: dict[int, set[int]],
    chunk: int = 4096,
) -> np.ndarray:
    """1-based rank of the best true tool of each query: its own tool or one of that tool's equivalents.

    Never worse than ``self_ranks``; equal to it for tools without equivalents.
    """
    positive = np.asarray(positive)
    ranks = np.empty(len(positive), dtype=np.int64)
    for start in range(0, len(positive), chunk):
        scores = query_emb[start : start + chunk] @ tool_emb.T
        for row, tool in enumerate(positive[start : start + chunk]):
            best = max(scores[row, j] for j in (int(tool), *equivalents.get(int(tool), ())))
            ranks[start + row] = int((scores[row] >= best).sum())
    return ranks
