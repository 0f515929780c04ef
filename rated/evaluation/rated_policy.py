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

from ecoagent.topk import top_k, top_k_dot

WARM_DEPTH = 4  # warm-up pairs keep their top 4K over the catalog: runs with late arrivals filter it


class RatedPolicy:
    """One RATED variant as a simulation policy: rank with the fused score, learn from the chosen tool.

    Cold start is cold: when a run's catalog has late arrivals, the run starts from a RATED that indexes
    only the tools present at step 0 (warmed up on them alone), and each late tool joins through
    ``RATED.add_tools`` (encoded by the frozen tool tower then, its bandit cold) at its arrival step,
    so nothing about it is known before.

    Args:
        model: a ``rated.RATED`` of any variant (``no_feedback`` ignores feedback by itself).
        query_emb: embeddings of the stream's query pool, [n_queries, d], from ``model.encode``.
        name: the row label in the tables.
        feedback: ``execution`` (default: learn whether the call executed) or ``task`` (learn whether
            it was a true tool: the labelled upper bound).
        tools: the catalog's tool table in index row order; needed only for runs with late arrivals.
    """

    max_attempts = 1

    def __init__(
        self,
        model: Any,
        query_emb: np.ndarray,
        name: str,
        feedback: str = "execution",
        tools: Any = None,
    ) -> None:
        self.model = model
        self.query_emb = np.ascontiguousarray(query_emb, dtype=np.float32)
        self.name = name
        self.feedback = feedback
        self.tools = tools
        self.k = int(model.config.top_k)
        self._weights = model.config.fusion_coefficients()
        self._all = top_k_dot(self.query_emb, model.index.embeddings, self.k)
        self._idx, self._sem = self._all
        self._cold = model.bandits.state_dict()  # the model is expected fresh: this is the prior start
        self._snapshot = self._cold
        self._warm: tuple[np.ndarray, list[frozenset[int]]] | None = None
        self.live = model
        self._l2g: np.ndarray | None = None  # live row -> catalog row (None: the same)
        self._pending: list[tuple[int, np.ndarray]] = []
        self.warm_up_stats: dict[str, float] = {}

    def _warm_up_model(
        self,
        model: Any,
        emb: np.ndarray,
        relevant: Sequence[frozenset[int]],
        candidates: tuple[np.ndarray, np.ndarray],
    ) -> dict[str, float]:
        """Replay the warm-up pairs on ``model``; ``candidates`` is each pair's top-K over its index."""
        emb = np.ascontiguousarray(emb, dtype=np.float32)
        hits = 0
        for n, rel in enumerate(relevant):
            idx, sem = candidates[0][n], candidates[1][n]
            tool = int(idx[model.bandits.fused(idx, sem, emb[n], self._weights)[1]])
            ok = tool in rel
            hits += ok
            model.feedback_embedding(tool, emb[n], ok, error=False)  # every warm-up call executes
        n = len(relevant)
        return {"pairs": n, "successes": hits, "success_rate": hits / n if n else 0.0}

    def _warm_candidates(self, present: np.ndarray, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The warm-up pairs' top-K over the ``present`` tools only, in live rows (``local``: catalog row ->
        live row, -1 for an absent tool), read off the deeper top-``WARM_DEPTH`` over the whole catalog kept by ``warm_up``.

        The same lists as a search of the present tools' index: the deep list is ordered by (score,
        catalog row), live rows keep the catalog's row order, and a present tool outside the deep list
        scores below every tool in it. A pair with fewer than K present tools in its deep list is
        searched again over the present tools. Every run with late arrivals starts this way, and a
        search of the step-0 catalog per run was half of those scenarios' time.
        """
        emb = self._warm[0]  # type: ignore[index]
        deep_idx, deep_sem = self._warm_deep  # type: ignore[misc]
        width = min(self.k, present.size)
        keep = local[deep_idx] >= 0
        full = keep.sum(axis=1) >= width
        keep &= (np.cumsum(keep, axis=1) <= width) & full[:, None]
        idx = np.zeros((len(emb), width), dtype=np.int64)
        sem = np.zeros((len(emb), width), dtype=deep_sem.dtype)
        idx[full] = local[deep_idx[keep]].reshape(-1, width)
        sem[full] = deep_sem[keep].reshape(-1, width)
        short = np.flatnonzero(~full)
        if short.size:
            idx[short], sem[short] = top_k_dot(emb[short], self.model.index.embeddings[present], width)
        return idx, sem

    def warm_up(self, pairs_emb: np.ndarray, relevant: Sequence[frozenset[int]]) -> dict[str, float]:
        """``RATED.warm_up`` on (embedding, true tools) pairs from the cold state, every tool available:
        select the best fused tool, learn ``success = it is a true tool`` (labelled, as the paper's
        2,000 warm-up pairs). The searches are batched (the result equals ``RATED.warm_up``'s, see the
        tests); the state after it is what each run starts from.
        """
        self.model.bandits.load_state_dict(self._cold)
        self._warm = (np.ascontiguousarray(pairs_emb, dtype=np.float32), list(relevant))
        deep = top_k_dot(self._warm[0], self.model.index.embeddings, WARM_DEPTH * self.k)
        self._warm_deep = deep
        head = (deep[0][:, : self.k], deep[1][:, : self.k])
        self.warm_up_stats = self._warm_up_model(self.model, *self._warm, candidates=head)
        self._snapshot = self.model.bandits.state_dict()
        return self.warm_up_stats

    def reset(self, arrival: np.ndarray) -> None:
        late = np.flatnonzero(arrival > 0)
        if not late.size:
            self.live, self._l2g, self._pending = self.model, None, []
            self._idx, self._sem = self._all
            self.model.bandits.load_state_dict(self._snapshot)
            return
        if self.tools is None or self.model.encoder is None:
            raise ValueError(
                f"{self.name}: a run with late arrivals needs the tool table and the encoder "
                "(new tools join through RATED.add_tools)"
            )
        from rated.index import ToolIndex
        from rated.retriever import RATED

        present = np.flatnonzero(arrival <= 0)
        ids = self.model.index.ids
        index = ToolIndex(
            self.model.index.dim, [ids[i] for i in present], self.model.index.embeddings[present]
        )
        self.live = RATED(self.model.encoder, index, self.model.prior[present], self.model.config)
        self._l2g = present.astype(np.int64)
        if self._warm is not None:
            local = np.full(len(self.model.index), -1, dtype=np.int64)
            local[present] = np.arange(present.size)
            rel = [frozenset(int(local[t]) for t in r if local[t] >= 0) for r in self._warm[1]]
            self._warm_up_model(self.live, self._warm[0], rel, self._warm_candidates(present, local))
        steps = np.unique(arrival[late])
        self._pending = [(int(s), late[arrival[late] == s]) for s in steps]
        self._refresh()

    def _refresh(self) -> None:
        self._idx, self._sem = top_k_dot(self.query_emb, self.live.index.embeddings, self.k)

    def _arrive(self, step: int) -> None:
        start = len(self.live.index)
        while self._pending and self._pending[0][0] <= step:
            _, tools = self._pending.pop(0)
            self.live.add_tools(self.tools[tools.tolist()])
            self._l2g = np.concatenate([self._l2g, tools.astype(np.int64)])
        if len(self.live.index) > start:
            self._merge_arrivals(start)

    def _merge_arrivals(self, start: int) -> None:
        """Update every query's top-K with the tools indexed from row ``start`` on: only they can enter it.

        The same top-K as ``_refresh`` over the whole live index (an arrival of the replayed MCP history
        comes every few steps, and rescoring the catalog each time was most of that scenario's cost).
        Ties still go to the lower row: the kept top-K is ordered by (score, row) and every new row is
        higher than every old one, so candidate positions are in row order among equal scores.
        """
        new = np.ascontiguousarray(self.live.index.embeddings[start:], dtype=np.float32)
        rows = np.arange(start, start + len(new), dtype=np.int64)
        cand = np.concatenate([self._idx, np.broadcast_to(rows, (len(self._idx), len(rows)))], axis=1)
        scores = np.concatenate([self._sem, self.query_emb @ new.T], axis=1)
        pos, self._sem = top_k(scores, self.k)
        self._idx = np.take_along_axis(cand, pos, axis=1)

    def fused(self, idx: np.ndarray, sem: np.ndarray, emb: np.ndarray) -> np.ndarray:
        return self.live.bandits.fused(idx, sem, emb, self._weights)[0]

    def ranking(self, emb: np.ndarray) -> np.ndarray:
        """Top-K tool indices by RATED's final score, best first (``RATED.rank_embedding``)."""
        idx, _ = self.model.rank_embedding(np.asarray(emb, dtype=np.float32))
        return np.asarray(idx, dtype=np.int64)

    def select(self, step: int, query: int) -> int:
        if self._pending:
            self._arrive(step)
        idx, sem = self._idx[query], self._sem[query]
        best = int(idx[int(np.argmax(self.fused(idx, sem, self.query_emb[query])))])
        return best if self._l2g is None else int(self._l2g[best])

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
        if self._l2g is not None:
            tool = int(np.flatnonzero(self._l2g == tool)[0])
        self.live.feedback_embedding(tool, self.query_emb[query], success, error)
