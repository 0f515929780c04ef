"""The tool index: every tool's embedding from the tool tower, searched by dot product.

Exact search over a float32 matrix is fast enough for catalogs of this size (a million tools at
d = 384 is a 1.5 GB matrix and one GEMV), needs no training, and lets a new tool join by encoding its
document alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ecoagent.topk import top_k


class ToolIndex:
    """Tool ids and their L2-normalized embeddings, with exact top-K search by dot product.

    Rows are kept in a float32 matrix that grows by doubling, so ``add`` is amortized O(new rows) and
    never re-encodes or retrains anything.

    Args:
        dim: embedding dimension.
        ids: tool ids, unique, in row order (optional; ``add`` more later).
        embeddings: their embeddings, shape (len(ids), dim); normalized here.

    Example:
        >>> import numpy as np
        >>> index = ToolIndex(2, ["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]))
        >>> idx, sem = index.search(np.array([0.6, 0.8], dtype=np.float32), k=1)
        >>> index.ids[int(idx[0])], round(float(sem[0]), 2)
        ('b', 0.8)
    """

    def __init__(self, dim: int, ids: Sequence[str] = (), embeddings: np.ndarray | None = None) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim
        self._emb = np.empty((0, dim), dtype=np.float32)
        self._n = 0
        self.ids: list[str] = []
        self._pos: dict[str, int] = {}
        if len(ids) or embeddings is not None:
            self.add(ids, np.empty((0, dim)) if embeddings is None else embeddings)

    def __len__(self) -> int:
        return self._n

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._pos

    @property
    def embeddings(self) -> np.ndarray:
        """The (n, dim) float32 matrix (a view; do not write)."""
        return self._emb[: self._n]

    @property
    def nbytes(self) -> int:
        """Bytes of the embedding matrix as allocated (capacity, not only used rows)."""
        return int(self._emb.nbytes)

    def copy(self) -> ToolIndex:
        """An independent index with bit-identical rows (no re-normalization)."""
        other = ToolIndex(self.dim)
        other._emb = self._emb[: self._n].copy()
        other._n = self._n
        other.ids = list(self.ids)
        other._pos = dict(self._pos)
        return other

    def position(self, tool_id: str) -> int:
        """Row of ``tool_id``; KeyError naming the id when it is not indexed."""
        try:
            return self._pos[tool_id]
        except KeyError:
            raise KeyError(f"tool {tool_id!r} is not in the index") from None

    def positions(self, tool_ids: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.position(t) for t in tool_ids), dtype=np.int64)

    def add(self, ids: Sequence[str], embeddings: np.ndarray) -> np.ndarray:
        """Append tools; returns their row indices.

        Raises:
            ValueError: shapes disagree, an id is already indexed or repeated, or an embedding is zero.
        """
        emb = np.asarray(embeddings, dtype=np.float32)
        if emb.ndim != 2 or emb.shape != (len(ids), self.dim):
            raise ValueError(f"embeddings must have shape ({len(ids)}, {self.dim}), got {emb.shape}")
        ids = [str(t) for t in ids]
        seen: set[str] = set()
        dupes = {t for t in ids if t in self._pos or t in seen or seen.add(t)}
        if dupes:
            raise ValueError(f"tool ids already indexed or repeated: {sorted(dupes)[:5]}")
        norms = np.sqrt(np.einsum("ij,ij->i", emb, emb))[:, None]  # no (n, d) temporary
        if (norms == 0).any():
            raise ValueError("a tool embedding is all zeros")
        need = self._n + len(ids)
        if need > self._emb.shape[0]:
            grown = np.empty((max(need, 2 * self._emb.shape[0]), self.dim), dtype=np.float32)
            grown[: self._n] = self._emb[: self._n]
            self._emb = grown
        rows = np.arange(self._n, need)
        block = self._emb[self._n : need]
        block[...] = emb
        block /= norms  # normalize in place: a million rows need no second copy
        for t, r in zip(ids, rows.tolist(), strict=True):
            self._pos[t] = r
        self.ids.extend(ids)
        self._n = need
        return rows

    def search(self, q_emb: np.ndarray, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` tools by dot product with ``q_emb``, best first.

        Args:
            q_emb: an L2-normalized query embedding, shape (dim,).
            k: how many; fewer when the index holds fewer tools.

        Returns:
            ``(idx, sem)``: int64 row indices and their float32 dot products (cosines), descending.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        q = np.asarray(q_emb, dtype=np.float32)
        if q.shape != (self.dim,):
            raise ValueError(f"query must have shape ({self.dim},), got {q.shape}")
        scores = self._emb[: self._n] @ q
        k = min(k, self._n)
        if k == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        idx, top = top_k(scores[None, :], k)
        return idx[0], top[0]
