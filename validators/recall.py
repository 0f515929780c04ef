"""Recall: the top-k tools of each ToolBench query by cosine, and what each cosine threshold keeps.

Queries and tools are embedded by the configured recall encoder (tools as
``ecoagent.schemas.tool_document``). A cosine threshold means different things for different
encoders, so besides applying one we report the score distribution and a threshold grid, the
evidence a profile's threshold is chosen from. Embeddings come from the one shared cache
(``ecoagent.embeddings``), so a rerun, or a later stage with the same encoder, does not embed the tool
table again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ecoagent.embeddings import embed
from ecoagent.topk import top_k as ecoagent_top_k
from ecoagent.topk import top_k_dot

log = logging.getLogger(__name__)

THRESHOLD_GRID: tuple[float, ...] = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


def top_k(query_emb: np.ndarray, tool_emb: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosines of the ``k`` most similar tools per query, best first (ties by index).

    Both inputs must be L2-normalized, so the dot product is the cosine.
    """
    if k <= 0:
        raise ValueError("k must be > 0")
    if tool_emb.shape[0] == 0:
        raise ValueError("the tool table is empty: no tools to recall")
    return top_k_dot(query_emb, tool_emb, k)


def distribution(values: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """Summary of a score distribution: count, mean, quantiles and a 0.05-wide histogram."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"count": 0}
    edges = np.round(np.arange(-1.0, 1.0001, 0.05), 2)
    hist, _ = np.histogram(arr, bins=edges)
    quantiles = {f"p{q}": float(np.percentile(arr, q)) for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)}
    return {
        "count": int(arr.size),
        "mean": float(arr.mean()),
        "min": float(arr.min()),
        "max": float(arr.max()),
        **quantiles,
        "histogram": [
            {"from": float(lo), "to": float(hi), "count": int(c)}
            for lo, hi, c in zip(edges[:-1], edges[1:], hist, strict=True)
            if c
        ],
    }


def threshold_grid(
    scores: Sequence[float] | np.ndarray,
    query_ids: Sequence[str],
    grid: Sequence[float] = THRESHOLD_GRID,
) -> list[dict[str, Any]]:
    """For each threshold: how many pairs (score >= t) and how many distinct queries it keeps."""
    arr = np.asarray(scores, dtype=float)
    qids = np.asarray(query_ids)
    rows = []
    for t in grid:
        mask = arr >= t
        rows.append(
            {
                "threshold": float(t),
                "pairs": int(mask.sum()),
                "queries": int(len(set(qids[mask].tolist()))),
                "share": float(mask.mean()) if arr.size else 0.0,
            }
        )
    return rows


BM25 = "bm25"  # the lexical retriever of the recall union (bm25s, as Table 1's BM25 baseline)


def retriever_name(retriever: str) -> str:
    """The name a recall retriever goes by in provenance columns and in Table 1 (``BM25``,
    ``all-MiniLM-L6-v2``, ``all-mpnet-base-v2``: ``ecoagent.retrievers``' names)."""
    return "BM25" if retriever.lower() == BM25 else retriever.split("/")[-1]


def score_matrix(retriever: str, queries: Sequence[str], documents: Sequence[str]) -> np.ndarray:
    """Scores of every document for every query, ``[n_queries, n_documents]``: BM25 scores for ``bm25``
    (Table 1's own BM25), cosines of L2-normalized embeddings for an encoder name (cached)."""
    if retriever.lower() == BM25:
        from ecoagent.retrievers import BM25Retriever

        return BM25Retriever().fit(documents).scores(queries).astype(np.float32)
    q = embed(retriever, queries)
    t = embed(retriever, documents)
    return q @ t.T


def top_k_of_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the ``k`` best documents per row, best first (ties by index)."""
    if k <= 0:
        raise ValueError("k must be > 0")
    if scores.shape[1] == 0:
        raise ValueError("the tool table is empty: no tools to recall")
    return ecoagent_top_k(scores, k)


def floor_from_distribution(top_scores: np.ndarray, quantile: float) -> float:
    """A retriever's floor: the ``quantile`` of its own top-k scores over all queries, so that every
    retriever passes the same share of what it proposes whatever its score scale (a BM25 score, a
    MiniLM cosine and an mpnet cosine are not comparable; the paper's 0.7 is a GTE-Large cosine)."""
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"floor quantile {quantile} is not in [0, 1]")
    values = np.asarray(top_scores, dtype=float).ravel()
    if values.size == 0:
        raise ValueError("no scores to set a floor from")
    return float(np.quantile(values, quantile, method="lower"))
