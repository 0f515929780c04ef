"""Top-k retrieval over a score matrix: the one implementation that recall, hard negatives, rivals, the
RATED index, candidate lists and the offline rankings all use.

Every caller gets the same order: best score first, ties to the lower column, so a result never depends
on how ``argpartition`` (or a BLAS kernel's summation order inside ``torch.topk``) happened to split
equal scores, and two stages that rank the same matrix agree.
"""

from __future__ import annotations

import numpy as np

CHUNK_ROWS = 8192  # rows of the score matrix held at once by ``top_k_dot``: 8192 x 8,638 float32 = 283 MB


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and scores of the ``k`` highest scores of each row, best first, ties to the lower column.

    Args:
        scores: ``[n_rows, n_columns]``, any float dtype (kept in the returned scores).
        k: how many per row; fewer when there are fewer columns.

    Returns:
        ``(idx, top)``: int64 ``[n_rows, min(k, n_columns)]`` and the matching scores.

    Raises:
        ValueError: ``k`` < 1, or ``scores`` is not 2-d.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be a 2-d [rows, columns] matrix, got shape {scores.shape}")
    k = min(k, scores.shape[1])
    if k == 0:
        return np.zeros((scores.shape[0], 0), np.int64), np.zeros((scores.shape[0], 0), scores.dtype)
    if k < scores.shape[1]:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        # argpartition picks arbitrarily among scores tied at the k-th place; such rows (rare with real
        # cosines, common with integer-like scores) are redone by a stable sort so the lower columns win
        kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
        for row in np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k):
            part[row] = np.argsort(-scores[row], kind="stable")[:k]
    else:
        part = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    order = np.lexsort((part, -np.take_along_axis(scores, part, axis=1)), axis=1)
    idx = np.take_along_axis(part, order, axis=1).astype(np.int64, copy=False)
    return idx, np.take_along_axis(scores, idx, axis=1)


def top_k_dot(
    query_emb: np.ndarray, doc_emb: np.ndarray, k: int, chunk: int = CHUNK_ROWS
) -> tuple[np.ndarray, np.ndarray]:
    """``top_k`` of ``query_emb @ doc_emb.T`` in float32, computed ``chunk`` query rows at a time so that
    70,000 Syn queries against the whole catalog never hold the full matrix.

    With L2-normalized embeddings the scores are cosines.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    q = np.ascontiguousarray(query_emb, dtype=np.float32)
    d = np.ascontiguousarray(doc_emb, dtype=np.float32)
    width = min(k, d.shape[0]) if k >= 1 else k
    parts = [top_k(q[start : start + chunk] @ d.T, k) for start in range(0, q.shape[0], chunk)]
    if not parts:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        return np.zeros((0, width), np.int64), np.zeros((0, width), np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
